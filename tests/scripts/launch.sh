#!/bin/sh
# launch.sh BUILD SRC: the round trip of -o vllm, sglang, llama-server and
# trtllm. Each command kvfit prints is run by a shell in which the engine
# (vllm, python -m sglang.launch_server, llama-server, trtllm-serve) is a
# function that hands its flags back to kvfit with the same model, engine
# and GPU; that plan must be the printed one: the same users, context and
# KV bytes. TensorRT-LLM's settings without a flag come in the YAML file
# the line writes; kvfit reads no YAML, so the stub maps its keys
# (kv_cache_config's dtype, tokens_per_block, host_cache_size,
# max_attention_window) to kvfit's options.
bin=$1 src=$2
cd "$src" || exit 1
PATH=$bin:$PATH KV_CONFIG_PATH=$(pwd)/configs LC_ALL=C
export PATH KV_CONFIG_PATH LC_ALL
fail=0 cases=0
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# the lines run in $tmp (TensorRT-LLM's write their YAML there), where
# the models' relative paths lead to the same files
ln -s "$(pwd)/tests" "$tmp/tests"

# The plan's users (users_whole, or --users where fewer), ctx and
# kv_bytes, from kvfit's TSV on stdin.
# (Of --users, fewer than fit: their share of kv_bytes, no prefix held
# once.)
plan() {
	awk -F'\t' -v users="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == "model" { next }
		{ u = $c["users_whole"]; kv = $c["kv_bytes"]
		  if (users != "" && users + 0 < u + 0) { kv = kv / u * users; u = users }
		  printf "%d %d %.0f\n", u, $c["ctx"], kv }'
}

# The engines, each handing its flags back to kvfit (the same $machine,
# its --engine).
back() {
	kvfit "$@" $machine -o tsv >>"$tmp/back" 2>"$tmp/back.err" ||
		{ echo "kvfit $*: exit $?"; cat "$tmp/back.err"; }
}
vllm() { shift; back "$@" --engine vllm; }
python() { shift 3; back "$@" --engine sglang; }
llama_server() { shift; back "$@" --engine llamacpp; }
trtllm_serve() {
	model=$1
	shift
	set -- "$model" "$@" --engine trtllm
	n=$#
	while [ "$n" -gt 0 ]; do # each argument once, YAML's in its place
		a=$1
		shift
		n=$((n - 1))
		if [ "$a" = --extra_llm_api_options ]; then
			yaml=$1
			shift
			n=$((n - 1))
			# a line a key (enable_attention_dp: true) or a section
			# (kv_cache_config: {dtype: fp8, max_attention_window: [a, b]})
			sed -e 's/^kv_cache_config: {//' -e 's/}$//' \
				-e 's/\[\([^]]*\)\]/\1/' -e 's/, \([0-9]\)/,\1/g' \
				-e 's/, /\n/g' "$yaml" >"$tmp/keys"
			while IFS=': ' read -r k v; do
				case $k in
				dtype) set -- "$@" --kv-dtype "$v" ;;
				tokens_per_block) set -- "$@" --block-size "$v" ;;
				host_cache_size) set -- "$@" --host_cache_size "$v" ;;
				max_attention_window)
					set -- "$@" --max-attention-window "$v" ;;
				enable_attention_dp)
					[ "$v" = true ] && set -- "$@" --enable_attention_dp ;;
				*) echo "unknown YAML key $k"; fail=1 ;;
				esac
			done <"$tmp/keys"
			continue
		fi
		set -- "$@" "$a"
	done
	back "$@"
}

# trip FORMAT MACHINE MODEL [OPTIONS...]: plan, print the command, run
# it back; the plans must agree. MACHINE: the GPU's name, and what
# both sides are given that is not an engine's flag (the host's memory,
# a shared prefix), one word.
trip() {
	fmt=$1 machine="--gpu $2"
	shift 2
	cases=$((cases + 1))
	case $fmt in
	vllm) e=vllm ;; sglang) e=sglang ;; llama-server) e=llamacpp ;;
	trtllm) e=trtllm ;;
	esac
	users=$(echo "$*" | sed -n 's/.*--users \([0-9]*\).*/\1/p')
	want=$(kvfit "$@" $machine --engine "$e" -o tsv 2>/dev/null |
		plan "$users")
	line=$(kvfit "$@" $machine -o "$fmt" 2>"$tmp/line.err") || {
		echo "FAIL: kvfit $* -o $fmt: exit $?"; cat "$tmp/line.err"
		fail=1; return; }
	rm -f "$tmp/back"
	(cd "$tmp" && eval "$(echo "$line" |
		sed -e 's/^llama-server /llama_server /' \
			-e 's/&& trtllm-serve /\&\& trtllm_serve /' \
			-e 's/^trtllm-serve /trtllm_serve /')")
	got=$(plan "" <"$tmp/back")
	if [ -z "$want" ] || [ "$want" != "$got" ]; then
		echo "FAIL: kvfit $* -o $fmt"
		echo "  printed: $line"
		echo "  plan (users ctx kv_bytes): $want; read back: $got"
		fail=1
	fi
}

for fmt in vllm sglang llama-server trtllm; do
	trip $fmt h100-sxm llama-3.1-8b --ctx 8k
	trip $fmt a100-80gb qwen3-30b-a3b --ctx 32k
	trip $fmt h100-sxm llama-3.1-8b --ctx 8k --users 16
	trip $fmt h100-sxm llama-3.1-8b --ctx 8k --max-num-batched-tokens 2048
	trip $fmt h100-sxm gemma-3-27b --ctx 16k,4k
	trip $fmt h100-sxm llama-3.1-8b --solve ctx --users 64
done
trip vllm h200 deepseek-v3 --tp 1 --dp 8 --enable-expert-parallel --ctx 32k
trip sglang h200 deepseek-v3 --tp 2 --dp 4 --ctx 32k
for fmt in vllm sglang trtllm; do
	trip $fmt h100-sxm llama-3.1-70b --tp 4 --ctx 32k -t fp8
	trip $fmt h100-sxm llama-3.1-70b --pp 4 --ctx 16k --util 0.85
	trip $fmt l40s llama-3.1-8b --ctx 4k --block-size 64
	trip $fmt h100-sxm llama-3.1-70b --solve tp --users 40 --ctx 32k
	trip $fmt h200 deepseek-v3 --tp 8 --dp-attention --ep 8 --ctx 32k
	trip $fmt h100-sxm qwen3-30b-a3b --tp 4 --dp-attention --ep 4 --ctx 16k --users 64
done
trip vllm 'h100-sxm --prefix 2000' llama-3.1-8b --ctx 8k
trip llama-server 'l40s --host-mem 256GiB' llama-3.1-70b --ctx 8k --solve layers --users 4
trip llama-server 'l40s --host-mem 256GiB' qwen3-30b-a3b --ctx 8k --n-gpu-layers auto
trip llama-server h100-sxm tests/gguf/qwen3-30b-a3b.gguf --ctx 8k -t q8_0
trip vllm h100-sxm tests/ckpt/tiny/config.json --ctx 256
trip vllm h100-sxm gemma-3-27b --ctx 8k --images 4
trip vllm h100-sxm llama-3.1-8b --ctx 8k -t int8
trip vllm h100-sxm llama-3.1-8b --ctx 8k --kv-memory 40GiB
trip vllm h100-sxm llama-3.1-8b --ctx 8k --max-loras 4 --max-lora-rank 64
trip vllm h100-sxm llama-3.1-8b --ctx 8k --max-loras 2 --max-cpu-loras 8
trip vllm h100-sxm llama-3.1-70b --tp 2 --ctx 8k --kv-offload 64GiB
trip sglang h100-sxm llama-3.1-8b --ctx 8k -t fp8_e5m2
trip sglang h100-sxm llama-3.1-8b --ctx 8k --max-loras 4 --max-lora-rank 16
trip sglang h100-sxm llama-3.1-8b --ctx 8k --kv-offload 100GB
trip sglang h100-sxm llama-3.1-8b --ctx 8k --hicache-ratio 3
trip sglang h100-sxm llama-3.1-8b --ctx 8k --max-loras 4 --max-lora-rank 16 \
	--lora-target-modules q_proj,v_proj
for fmt in vllm sglang; do
	trip $fmt h100-sxm llama-3.1-70b --tp 4 --ctx 8k --draft llama-3.2-1b-instruct \
		--spec-tokens 4
	trip $fmt h100-sxm llama-3.1-8b --ctx 8k --spec-method eagle3 \
		--draft eagle3-llama3.1-instruct-8b --spec-tokens 3
	trip $fmt h200 deepseek-v3 --tp 8 --ctx 8k --spec-method mtp --spec-tokens 3
	trip $fmt h100-sxm llama-3.1-8b --ctx 8k --spec-method ngram --spec-tokens 3
done
trip llama-server h100-sxm llama-3.1-8b --ctx 8k --draft llama-3.2-1b-instruct --spec-tokens 8
trip llama-server h100-sxm llama-3.1-8b --ctx 8k --max-num-batched-tokens 4096
trip llama-server h100-sxm llama-3.1-8b --ctx 8k -t q8_0
trip llama-server l40s llama-3.1-8b --ctx 3000 --cache-type-k q8_0 --cache-type-v q4_0
trip llama-server h100-sxm gemma-3-27b --ctx 16k --kv-unified
trip llama-server h100-sxm gemma-3-27b --ctx 16k --swa-full
trip llama-server 'l40s --host-mem 256GiB' llama-3.1-70b --ctx 8k --n-gpu-layers 20
trip llama-server 'l40s --host-mem 256GiB' qwen3-30b-a3b --ctx 8k --n-cpu-moe 12
trip llama-server 'h100-sxm --host-mem 256GiB' qwen3-30b-a3b --ctx 8k \
	--override-tensor 'blk\.(1|2)\.ffn_.*_exps=CPU'
trip trtllm h100-sxm gemma-3-27b --ctx 32k --max-attention-window 1024,32768
trip trtllm h100-sxm llama-3.1-8b --ctx 8k --host_cache_size 34359738368
echo "$cases round trips"
exit $fail
