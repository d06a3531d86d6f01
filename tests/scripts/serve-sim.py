#!/usr/bin/env python3
# serve-sim.py USERS ISL OSL BUDGET ALONE [CHUNK]: a closed loop of USERS
# requests (ISL prompt tokens, OSL out), each sent again the moment it
# ends, run step by step under an engine's scheduling rule, with each
# step timed as kvfit times one (the weights' products, then attention,
# each a roofline), for Llama 3.1 8B in bf16 on an H100 SXM at its
# datasheet rates (test_serve.c's figures). Prints the mean time to first
# token, time per output token (after the first), latency, and output
# tokens a second (users x osl / latency), over four rounds of requests
# after a warm-up of three.
#
# The rules, as the engines schedule:
#   ALONE 0 (vLLM's chunked prefill): every running decode takes a token
#     of the step's BUDGET (0: none), then waiting and part-done prompts,
#     first come first served, take what is left, a prompt in chunks.
#   ALONE 1 (SGLang, mixed chunks off): while prompts wait, a step takes
#     them alone, first come first served, up to CHUNK tokens (a longer
#     prompt in chunks); the decodes run in the steps between.
#   ALONE 2 (TensorRT-LLM, chunked prefill off): the running decodes,
#     then waiting prompts whole, first come first served, while they
#     fit in what is left of BUDGET.
# It is the model kvfit replaces by a fluid one (kvfit(1), TIME, Steady
# state); tests/scripts/steady.sh holds the two to each other.
#
# serve-sim.py --prompts N USERS ISL OSL BUDGET ALONE [CHUNK]: a
# benchmark's burst instead: N requests, USERS at once, the first USERS
# sent together and each other the moment one ends; the means over all N
# (ttft from when each was sent) and N x OSL over the run's span, as
# kvfit --arrivals burst reports them (tests/scripts/burst.sh). A prompt
# piece that does not end its prompt gives no logits row.
import sys

LIN = 2 * 6979584000.0          # products' FLOPs a token
HEAD = 2 * 128256.0 * 4096      # the head's, a logits row
KVT = 131072.0                  # KV bytes a token
W = 14953286207.0               # weights read a step (not the lookup)
BW, PEAK = 3.35e12, 989.5e12


def att(n):                     # attention FLOPs of a token over n
    return 524288.0 * n


def roof(nbytes, flops):
    return max(nbytes / BW, flops / PEAK) * 1e3


def run(users, isl, osl, budget, alone, chunk):
    # each user: [phase, prompt done, tokens out, sent at, first at]
    u = [['wait', 0, 0, 0.0, 0.0] for _ in range(users)]
    queue = list(range(users))  # first come, first served
    t, ended, warm = 0.0, 0, 3 * users
    ttft, tpot, lat = [], [], []
    while len(lat) < 4 * users:
        dec = [i for i in range(users) if u[i][0] == 'dec']
        pre, room = [], (chunk if alone else
                         (budget - len(dec) if budget else 1 << 62))
        waiting = [i for i in queue if u[i][0] == 'wait']
        if alone and not waiting:
            room = 0
        for i in waiting:
            if room <= 0:
                break
            c = min(isl - u[i][1], room)
            pre.append((i, c, u[i][1]))
            room -= c
        if alone and pre:
            dec = []
        tok = len(dec) + sum(c for _, c, _ in pre)
        flops = tok * LIN + (len(dec) + len(pre)) * HEAD
        kv = (sum((isl + u[i][2]) * KVT for i in dec) +
              sum(o * KVT for _, _, o in pre) + tok * KVT)
        aflops = (sum(att(isl + u[i][2]) for i in dec) +
                  sum(c * att(o + (c + 1) / 2) for _, c, o in pre))
        t += roof(W, flops) + roof(kv, aflops)
        for i in dec:
            u[i][2] += 1
            if u[i][2] < osl:
                continue
            ended += 1
            if ended > warm:
                ttft.append(u[i][4] - u[i][3])
                lat.append(t - u[i][3])
                tpot.append((t - u[i][4]) / (osl - 1))
            u[i] = ['wait', 0, 0, t, 0.0]
            queue.remove(i)
            queue.append(i)
        for i, c, _ in pre:
            u[i][1] += c
            if u[i][1] == isl:
                u[i][0], u[i][2], u[i][4] = 'dec', 1, t
    mean = lambda v: sum(v) / len(v)
    # a closed loop with no pause between requests: each user ends one
    # request a latency (Little's law)
    return (mean(ttft), mean(tpot), mean(lat),
            users * osl / mean(lat) * 1e3)


def bench(prompts, users, isl, osl, budget, rule, chunk):
    # each request: [prompt done, tokens out, sent at, first at]
    sent = [[0, 0, 0.0, 0.0] for _ in range(users)]
    queue, dec, unsent = list(sent), [], prompts - users
    t, ttft, tpot, lat = 0.0, [], [], []
    while len(lat) < prompts:
        pre = []
        room = (chunk if rule == 1 else
                budget - len(dec) if budget else 1 << 62)
        for q in queue:
            left = isl - q[0]
            if room <= 0 or (rule == 2 and left > room):
                break
            c = min(left, room)
            pre.append((q, c, q[0]))
            room -= c
        run_dec = [] if rule == 1 and queue else dec
        tok = len(run_dec) + sum(c for _, c, _ in pre)
        heads = len(run_dec) + sum(1 for q, c, o in pre if o + c == isl)
        flops = tok * LIN + heads * HEAD
        kv = (sum((isl + q[1]) * KVT for q in run_dec) +
              sum(o * KVT for _, _, o in pre) + tok * KVT)
        aflops = (sum(att(isl + q[1]) for q in run_dec) +
                  sum(c * att(o + (c + 1) / 2) for _, c, o in pre))
        t += roof(W, flops) + roof(kv, aflops)
        freed = 0
        for q in list(run_dec):
            q[1] += 1
            if q[1] == osl:
                dec.remove(q)
                lat.append(t - q[2])
                tpot.append((t - q[3]) / (osl - 1))
                freed += 1
        for q, c, _ in pre:
            q[0] += c
            if q[0] == isl:
                queue.remove(q)
                q[1], q[3] = 1, t
                ttft.append(t - q[2])
                dec.append(q)
        for _ in range(min(freed, unsent)):
            queue.append([0, 0, t, 0.0])
            unsent -= 1
    mean = lambda v: sum(v) / len(v)
    return (mean(ttft), mean(tpot), mean(lat), prompts * osl / t * 1e3)


def main():
    args = sys.argv[1:]
    prompts = 0
    if args[:1] == ["--prompts"]:
        prompts, args = int(args[1]), args[2:]
    a = [int(x) for x in args]
    if len(a) not in (5, 6) or a[0] < 1 or a[1] < 1 or a[2] < 2:
        sys.exit("usage: serve-sim.py [--prompts N] USERS ISL OSL(>=2) "
                 "BUDGET ALONE [CHUNK]")
    chunk = a[5] if len(a) > 5 else 8192
    if prompts:
        r = bench(max(prompts, a[0]), a[0], a[1], a[2], a[3], a[4], chunk)
    else:
        r = run(a[0], a[1], a[2], a[3], a[4], chunk)
    print("%.3f\t%.3f\t%.1f\t%.1f" % r)


main()
