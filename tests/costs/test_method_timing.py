"""The interleaved timing loop (cadlib.costs.method_timing): its order, not its speed."""

from types import SimpleNamespace

from cadlib.costs.method_timing import interleaved


def _case(name, n):
    return SimpleNamespace(name=name, target=[0] * n, edit_prompt=[0] * n)


def test_jobs_rotate_per_repeat_and_case_after_a_warm_up_on_the_shortest_case():
    calls = []

    def run(job, x, repeat):
        calls.append((job, x.name, repeat))
        return dict(job=job, case=x.name, repeat=repeat)

    inputs = [_case("long", 9), _case("short", 2)]
    rows = interleaved(["a", "b", "c"], inputs, run, repeats=2, warmup=1, progress=False)
    assert calls[:3] == [("a", "short", None), ("b", "short", None), ("c", "short", None)]
    order = [(r["repeat"], r["case"], r["job"]) for r in rows]
    assert order == [
        (0, "long", "a"),
        (0, "long", "b"),
        (0, "long", "c"),
        (0, "short", "b"),
        (0, "short", "c"),
        (0, "short", "a"),
        (1, "long", "b"),
        (1, "long", "c"),
        (1, "long", "a"),
        (1, "short", "c"),
        (1, "short", "a"),
        (1, "short", "b"),
    ]
    assert len(calls) == 3 + len(rows)
