kvbench --profile local.json --bench decode
