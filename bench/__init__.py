"""The kit's benchmarks and probes: how fast the executor, the model client, the statistics, the scorers and the
post-run stages are, and `make rehearse`, the whole pipeline at the paper's size against the fake model server.

    python -m bench executor | client | stats | scoring | stages | rehearse | synthesize-fullsize | compare-records
                    | gpu-hours | vllm-cpu | demo-models | honest-corpus

(`make bench-*`, `make rehearse`; JSON under runs/bench/). Every report is built from one machine snapshot
(machine.py: cores, platform, Python, load average before and after) and states its targets with one type
(targets.py: `Target`, met or missed and by how much).

    machine.py          the machine and its load, for every report
    targets.py          Target: a bound on a measured figure, its verdict
    executor.py         `make bench-executor`: latency patterns, 1,100 programs, the phase breakdown
    phase_probe.py      where one program's time goes inside the executor (standalone: runs in runsc too)
    client.py           `make bench-client`: the kit's model client against bare httpx and aiohttp
    stats.py            `make bench-stats`: the s5 table on synthetic arrays against a per-draw loop
    scoring.py          `make bench-scoring`: every scorer on ~100 kB adversarial replies (adversarial_replies.py)
    stages.py           the one list of post-run stages (stats, tables, figures, report, checksums, verify), timed
    rehearsal.py        `make rehearse`: the reference run through `harness reproduce` (the same
                        reproduction.run_pipeline `make reproduce` uses), stages, kill-and-resume, fault counts
    compare.py          the canonical record comparison (what "identical by content" means)
    fullsize.py         a SYNTHETIC full-size result set replicated from a small rehearsal, for timing the stages
    gpu_hours.py        `make bench-gpu-hours`: vLLM's prefix-cache counters under both request orders, the H100 hours
    vllm_replay.py      vLLM's own scheduler driven without a model (runs in .venv-vllm; standalone)

Not part of the installed kit: bench imports harness and executor, nothing in harness or executor imports bench,
and bench imports nothing from tests (tests/test_import_graph.py checks all three).
"""
