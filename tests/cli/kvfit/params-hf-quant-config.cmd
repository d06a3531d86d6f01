kvfit --params tests/quant/modelopt-fp8 tests/quant/modelopt-nvfp4 tests/quant/modelopt-stale
