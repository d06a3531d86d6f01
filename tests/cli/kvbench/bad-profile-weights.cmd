kvbench --profile /tmp/kvbench-bad-profile.json --weights-dtype f32,bf16
