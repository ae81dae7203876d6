"""Stack.transient against `cuth transient`'s time series, and a session
stepped by hand against Stack.transient."""

import numpy as np
import pytest

import cuth
from conftest import EV6, EV6_TRACE, read_csv_columns, read_ptrace, run_cli

DT = 3.333e-6
STEPS = 12


def test_transient_matches_cli_timeseries(ev6, tmp_path):
    rec = ev6.transient(EV6_TRACE, DT, steps=STEPS)
    out = tmp_path / "tr"
    run_cli("transient", EV6, "--grid", "32x32", "--device", "cpu", "--trace", EV6_TRACE,
            "--dt", DT, "--steps", STEPS, "--init", "ambient", "--kelvin", "--no-maps",
            "--out", out, "-q")
    cli = read_csv_columns(out / "timeseries.csv")
    # Row 0 of the CLI's series is t = 0; the record holds the steps after it.
    np.testing.assert_allclose(rec["time"], cli["time_s"][1:], rtol=1e-9)
    checked = 0
    for key, series in rec["blocks"].items():
        matches = [c for c in cli if c.endswith(f".{key.split('.')[-1]}_max_k")]
        col = next((c for c in matches if "." not in key or c.startswith(key.split(".")[0] + ".")), None)
        if col is None:
            continue
        for stat in ("min", "avg", "max"):
            np.testing.assert_allclose(series[stat], cli[col[: -len("max_k")] + f"{stat}_k"][1:],
                                       rtol=0, atol=6e-7, err_msg=f"{key} {stat}")
        checked += 1
    assert checked >= 40


def test_trace_dict_equals_trace_file(ev6):
    names, rows = read_ptrace(EV6_TRACE)
    a = ev6.transient(EV6_TRACE, DT, steps=STEPS)
    b = ev6.transient({n: rows[:, i] for i, n in enumerate(names)}, DT, steps=STEPS)
    np.testing.assert_array_equal(a["time"], b["time"])
    for k in a["blocks"]:
        np.testing.assert_array_equal(a["blocks"][k]["max"], b["blocks"][k]["max"])


def test_session_stepping_equals_transient(ev6):
    names, rows = read_ptrace(EV6_TRACE)
    rec = ev6.transient(EV6_TRACE, DT, steps=STEPS)
    sim = ev6.session()
    assert sim.time == 0.0
    for k in range(STEPS):
        # Past the trace's last row, the last row stays in force.
        sim.set_power(dict(zip(names, rows[min(k, len(rows) - 1)])))
        rep = sim.step(DT)
        assert rep["iterations"] > 0
        blocks = sim.blocks()
        for key, b in blocks.items():
            assert b["max"] == rec["blocks"][key]["max"][k]
            assert b["min"] == rec["blocks"][key]["min"][k]
        assert sim.hottest()["t"] == rec["hottest"][k]
    assert sim.time == pytest.approx(STEPS * DT, rel=1e-12)
    assert sim.power == pytest.approx(rows[-1].sum(), rel=1e-12)


def test_session_reads_and_refusals(ev6):
    sim = ev6.session()
    sim.steady()
    assert sim.time == 0.0
    t = sim.temperature()
    nx, ny = ev6.grid_shape
    assert t.shape[1:] == (ny, nx)
    core = sim.layer("L4_cores")
    assert core.shape == (ny, nx)
    h = sim.hottest()
    assert h["t"] == pytest.approx(t.max(), abs=1e-12)
    assert sim.probes() == {}
    with pytest.raises(cuth.InputError, match="dt"):
        sim.step(-1.0)
    with pytest.raises(cuth.InputError, match="layer `nope`"):
        sim.layer("nope")
    with pytest.raises(cuth.InputError, match="block `nope`"):
        sim.set_power({"nope": 1.0})
    # A refused call changes nothing.
    assert sim.time == 0.0
    np.testing.assert_array_equal(sim.temperature(), t)


def test_init_steady_starts_from_the_steady_field(ev6):
    names, rows = read_ptrace(EV6_TRACE)
    const = {n: np.full(3, rows[0, i]) for i, n in enumerate(names)}
    rec = ev6.transient(const, DT, init="steady")
    steady = ev6.solve(power={n: rows[0, i] for i, n in enumerate(names)})
    for k, b in steady.blocks.items():
        if b["max"] is not None:
            assert rec["blocks"][k]["max"][-1] == pytest.approx(b["max"], abs=1e-5)


def test_session_solves_a_liquid_cooled_stack():
    """A session on a stack with a microchannel cavity: its steady field is
    Stack.solve's (the coolant's heat included), and long steps reach it."""
    import os
    from conftest import CONFIGS

    stack = cuth.Stack.from_toml(os.path.join(CONFIGS, "liquid_f2f.toml"), grid=(201, 16),
                                 device="cpu")
    want = stack.solve().temperature
    sim = stack.session()
    sim.steady()
    np.testing.assert_allclose(sim.temperature(), want, rtol=0, atol=1e-9)
    sim2 = stack.session()
    sim2.step(1e6, steps=3)
    np.testing.assert_allclose(sim2.temperature(), want, rtol=0, atol=1e-6)
