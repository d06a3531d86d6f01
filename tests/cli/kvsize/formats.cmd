kvsize llama-3.1-8b -t f32,f16,bf16,fp8,fp8_e5m2,int8,q8_0,q4_0,q4_1,q5_0,q5_1,iq4_nl -c 1
