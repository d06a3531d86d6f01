kvdecode --layers 2 --vocab 1000 --prompt 16 --new 8 --threads 2 --k-dtype q4_0 --v-dtype f16 2>/dev/null | cut -f1,2,5,6
