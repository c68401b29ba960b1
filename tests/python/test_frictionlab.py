# SPDX-License-Identifier: Apache-2.0
"""pytest tests of the frictionlab Python module (python/frictionlab, docs/python.md).

Run by tests/cli/python.sh with /usr/bin/python3 against the build's libfrictionlab
(FRICTIONLAB_LIBRARY). FL_SHARED_DIR holds the FCLIB files; FL_BINARY is the program (for the
comparison with `frictionlab profile`); FL_BUILD_DIR has plugins/.
"""
import math
import os
import subprocess

import numpy as np
import pytest

import frictionlab as fl

SHARED = os.environ.get("FL_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                      "shared"))
FCLIB = os.path.join(SHARED, "fclib")
GLOBAL = os.path.join(FCLIB, "Box_Stacks-i0035-31-0.hdf5")
GLOBAL2 = os.path.join(FCLIB, "LMGC_GlobalFrictionContactProblem00046.hdf5")
LOCAL = os.path.join(FCLIB, "converted_from_siconos_dat", "Rover4396.hdf5")


def need(path):
    if not os.path.exists(path):
        pytest.skip("no %s" % path)
    return path


def py_jacobi(problem, gamma, v, it):
    """Damped projected Jacobi on the local form, in numpy: the solver a user writes."""
    W, q = problem.local_form()
    mu = problem.mu
    nc = problem.nc
    rho = 3.0 / W.diagonal().reshape(nc, 3).sum(axis=1)
    omega = it.options["omega"]
    g = gamma[:3 * nc].reshape(nc, 3)  # a view: updates go to the solve's array
    while True:
        u = (W @ gamma[:3 * nc] + q).reshape(nc, 3)
        uhat = u.copy()
        uhat[:, 0] += mu * np.linalg.norm(u[:, 1:], axis=1)
        res = np.linalg.norm(g - fl.project_cones(g - uhat, mu)) / (1 + np.linalg.norm(q))
        if it.record(res):
            return
        g += omega * (fl.project_cones(g - rho[:, None] * uhat, mu) - g)


@pytest.fixture(scope="module")
def pysolver():
    name = fl.register_solver("py-jacobi", py_jacobi,
                              options={"omega": (0.5, 1e-6, 1.0, "damping")},
                              summary="damped projected Jacobi in numpy")
    yield name
    fl.unregister_solver(name)


def test_version_and_library():
    v, abi = fl.version()
    assert abi == 1
    assert v.count(".") == 2


def test_problem_arrays():
    p = fl.Problem.load_fclib(need(GLOBAL))
    assert p.kind == "global" and p.nc == 31 and p.nv == 450 and p.nh == 0
    A, J = p.A, p.J
    assert A.shape == (450, 450) and J.shape == (93, 450)
    assert np.allclose(A.toarray(), A.toarray().T)
    assert np.all(p.mu == 0.3)
    # the local form: W = J A^-1 J^T, checked against a dense computation
    W, q = p.local_form()
    Wd = J.toarray() @ np.linalg.solve(A.toarray(), J.toarray().T)
    assert np.abs(W.toarray() - Wd).max() <= 1e-10 * np.abs(Wd).max()
    assert np.allclose(q, J @ p.vstar + p.b)
    pl = fl.Problem.load_fclib(need(LOCAL))
    assert pl.kind == "local" and pl.nv == 0 and pl.W.shape == (3 * pl.nc, 3 * pl.nc)
    with pytest.raises(fl.FrictionLabError) as e:
        fl.Problem.load_fclib("/nonexistent.hdf5")
    assert "/nonexistent.hdf5" in str(e.value)


def test_solve_builtin_matches_definitions():
    p = fl.Problem.load_fclib(need(GLOBAL))
    s = fl.solve(p, "nsn")
    assert s.reason.startswith("CONVERGED") and s.merit < 1e-10
    # the answer satisfies the balance and the reported u
    A, J = p.A, p.J
    assert np.linalg.norm(A @ (s.v - p.vstar) - J.toarray().T @ s.gamma) < 1e-8 * np.linalg.norm(
        J.toarray().T @ s.gamma)
    assert np.allclose(s.u, J @ s.v + p.b)
    # the history has iters.csv's columns and ends at the returned merit
    assert list(s.history.columns) == ["iter", "time", "error", "merit", "momentum", "objective",
                                       "step_length", "inner_iters"]
    assert s.history["merit"].iloc[-1] == s.merit
    # options reach the solver, and bad ones are refused with the library's message
    s2 = fl.solve(p, "pgs", options={"max_iter": 3})
    assert s2.iters == 3 and s2.reason == "DIVERGED_MAX_ITER"
    with pytest.raises(fl.FrictionLabError, match="unknown option 'pgs.omegaa'"):
        fl.solve(p, "pgs", options="pgs.omegaa=1")
    # the answer scored from Python: the same merit
    sc = fl.score(p, s.v, s.gamma)
    assert sc.merit == s.merit and sc.reason == "CONVERGED_EXACT"


def test_python_solver_beside_builtins(pysolver, tmp_path):
    """The Python solver is a registered solver: listed, configured, solved, measured."""
    assert fl.solvers()[pysolver] == ("damped projected Jacobi in numpy", "python")
    assert fl.solver_options(pysolver)["omega"][1] == 0.5
    for path in (need(LOCAL), need(GLOBAL)):
        p = fl.Problem.load_fclib(path)
        s = fl.solve(p, pysolver, options="py-jacobi.omega=0.8,max_iter=5000,abs_tol=1e-9")
        assert s.reason == "CONVERGED_ATOL", (path, s)
        assert s.merit < 1e-6
        # measured by the library's metrics, not by the solver's own claim
        assert fl.score(p, s.v, s.gamma).merit == s.merit
        assert s.history["iter"].iloc[-1] == s.iters
    # an exception in the solver is a FrictionLabError naming it, chained to the original
    def broken(problem, gamma, v, it):
        raise ValueError("no idea")
    fl.register_solver("py-broken", broken)
    try:
        with pytest.raises(fl.FrictionLabError, match="python solver py-broken: ValueError"):
            fl.solve(fl.Problem.load_fclib(need(LOCAL)), "py-broken")
    finally:
        fl.unregister_solver("py-broken")


def test_profile_ranks_three_builtin_and_one_python_solver(pysolver):
    """Three built-in solvers and the Python one on FCLIB files: every pair measured by the
    common merit, all four ranked; the built-in solvers' iteration costs are those of
    `frictionlab profile` on the same files."""
    files = [need(GLOBAL), need(GLOBAL2), need(LOCAL)]
    solvers = ["pgs", "nsn", "jacobi", pysolver]
    prof = fl.profile(files, solvers, tol=1e-6, options="max_iter=2000")
    assert prof.costs.shape == (12, 5)
    rank = prof.ranking()
    assert sorted(r[0] for r in rank) == sorted(solvers)
    for name, best, solved, area in rank:
        assert 0 <= best <= solved <= 1
    # NSN (two Newton steps on these) is the best on every problem by iterations
    assert rank[0][0] == "nsn" and rank[0][1] == 1.0
    # the Python solver solves every one of them
    assert prof.rho([math.inf])[solvers.index(pysolver), 0] == 1.0
    print(prof.costs.to_string())
    print(rank)
    # against the program's own profile: the same iteration costs for the built-in solvers
    binary = os.environ.get("FL_BINARY")
    if not binary:
        pytest.skip("FL_BINARY not set")
    import tempfile
    import pandas as pd
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "prof")
        subprocess.run([binary, "profile"] + files + ["--solver", "pgs,nsn,jacobi", "--set",
                       "max_iter=2000", "--tol", "1e-6", "--out", out], check=True,
                       stdout=subprocess.DEVNULL)
        cli = pd.read_csv(os.path.join(out, "costs.csv"))
    for _, row in cli.iterrows():
        mine = prof.costs[(prof.costs.problem == row.problem) & (prof.costs.solver == row.solver)]
        assert len(mine) == 1
        assert mine.iterations.iloc[0] == row.iterations, (row.problem, row.solver)
        assert mine.solved.iloc[0] == row.solved


def test_template_plugin_from_python():
    path = os.path.join(os.environ.get("FL_BUILD_DIR", "build"), "plugins", "damped_jacobi.so")
    if not os.path.exists(path):
        pytest.skip("no %s" % path)
    added = fl.load_plugin(path)
    assert added in (0, 1)
    assert fl.solvers()["damped-jacobi"][1] == os.path.realpath(path)
    p = fl.Problem.load_fclib(need(GLOBAL))
    s = fl.solve(p, "damped-jacobi", options="omega=0.8,max_iter=5000,abs_tol=1e-9")
    assert s.merit < 1e-6


def test_solution_file_round_trip(tmp_path):
    p = fl.Problem.load_fclib(need(GLOBAL))
    s = fl.solve(p, "pgs")
    out = tmp_path / "answer.hdf5"
    fl.save_solution(p, out, s.v, s.gamma)
    v, g = fl.read_solution(p, out)
    assert np.array_equal(v, s.v) and np.array_equal(g, s.gamma)
    # the file is FCLIB: it loads as the same problem, and the answer scores as solve said
    q = fl.Problem.load_fclib(out)
    assert fl.score(q, v, g).merit == s.merit


def test_scene_step_as_arrays():
    p = fl.scene_problem("heavy_stack", step=3, solver="nsn")
    assert p.kind == "global" and p.nv == 30  # five boxes
    # the same step as `run` takes it: its `contacts` observable after step 3 is this count
    df = fl.run_scene("heavy_stack", ["nsn"], steps=4)
    assert df.contacts.iloc[3] == p.nc >= 20
    assert np.all(np.isfinite(p.phi0))
    s = fl.solve(p, "nsn")
    assert s.merit < 1e-8


def test_run_scene_observables_frame():
    df = fl.run_scene("box_pile", ["pgs", "sap"], steps=20)
    assert list(df.columns[:2]) == ["step", "solver"]
    assert {"t", "contacts", "pen_max", "energy"} <= set(df.columns)
    assert len(df) == 40 and set(df.solver) == {"pgs", "sap"}
    assert df[df.solver == "pgs"].t.iloc[-1] == pytest.approx(20 * (df.t.iloc[1] - df.t.iloc[0]))


def test_mjcf_model_with_every_stepper():
    """An MJCF model read through MuJoCo's parser runs with FrictionLab's solvers and MuJoCo's
    own Newton: the same first-step contacts (4 per box, 1 per ball)."""
    src = os.environ.get("FL_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    model = os.path.join(src, "tests", "data", "boxes_spheres.xml")
    try:
        df = fl.run_scene(model, ["sap", "pgs", "mujoco-newton"], steps=1)
    except fl.FrictionLabError as e:
        if "MuJoCo" in str(e):
            pytest.skip(str(e))
        raise
    assert list(df.contacts) == [10, 10, 10]


def test_cone_projection_is_the_librarys():
    """fl.project_cones (numpy) against the library's fl_cone_project on random points."""
    import ctypes
    from frictionlab import _ffi as F
    proj = F.lib.fl_cone_project
    proj.restype = None
    proj.argtypes = [ctypes.c_double, F.P_double, F.P_double]
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2000, 3))
    mu = rng.uniform(0, 1.5, size=2000)
    mu[:10] = 0
    mine = fl.project_cones(x, mu)
    for k in range(len(x)):
        out = np.zeros(3)
        xk = np.ascontiguousarray(x[k])
        proj(mu[k], xk.ctypes.data_as(F.P_double), out.ctypes.data_as(F.P_double))
        assert np.allclose(mine[k], out, rtol=1e-13, atol=1e-15), (x[k], mu[k], mine[k], out)
