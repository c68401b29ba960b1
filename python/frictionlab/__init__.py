# SPDX-License-Identifier: Apache-2.0
"""frictionlab: FrictionLab's library from Python (docs/python.md).

A thin module over libfrictionlab (ctypes and numpy; nothing to compile): problems as numpy
arrays, every registered solver with its options, the common metrics, scenes stepped with their
observables as a pandas frame, solvers written in Python beside the built-in ones, and
performance profiles measured the way `frictionlab profile` measures them.

    import frictionlab as fl
    p = fl.Problem.load_fclib("Box_Stacks-i0035-31-0.hdf5")
    s = fl.solve(p, "nsn")                 # s.reactions, s.velocities, s.merit, s.history
    prof = fl.profile([p], ["pgs", "nsn", "sap"])
    print(prof.ranking())
"""
import ctypes
import math
import os

import numpy as np

from . import _ffi as F

__all__ = ["project_cones", "de_saxce", "FrictionLabError", "Problem", "Csr", "Solution", "Score", "solve", "score",
           "save_solution", "read_solution", "solvers", "solver_options", "load_plugin",
           "load_plugin_path", "register_solver", "python_solver", "unregister_solver",
           "profile", "Profile", "scene_problem", "run_scene", "version", "library_path"]

NORMS = {"none": 0, "fclib": 1, "siconos": 2}
library_path = F.LIBRARY_PATH


def version():
    """FrictionLab's version string and ABI version of the loaded library."""
    return F.fl_version().decode(), F.fl_abi_version()


class FrictionLabError(RuntimeError):
    """A call into the library failed: code (FL_ERR_*, negative), name and message."""

    def __init__(self, code, message):
        self.code = code
        self.name = F.fl_errname(code).decode()
        super().__init__("%s (%s)" % (message, self.name))


def _check(rc):
    if rc < 0:
        raise FrictionLabError(rc, F.fl_errmsg().decode(errors="replace"))
    return rc


def _b(s):
    return s.encode() if isinstance(s, str) else s


F.fl_register_all()


def _array(ptr, n, dtype=np.float64):
    """a numpy view of n entries at ptr (no copy), or an empty array"""
    if n <= 0 or not ptr:
        return np.zeros(0, dtype=dtype)
    return np.ctypeslib.as_array(ptr, shape=(int(n),))


class Csr:
    """A sparse matrix in compressed rows: indptr, indices, data (numpy) and shape."""

    def __init__(self, indptr, indices, data, shape):
        self.indptr, self.indices, self.data, self.shape = indptr, indices, data, shape
        self._rows = None

    @classmethod
    def _from(cls, csr_ptr, copy=False):
        if not csr_ptr:
            return None
        c = csr_ptr.contents
        ip = _array(c.rowptr, c.nrow + 1, np.int32)
        ix = _array(c.col, c.nnz, np.int32)
        dv = _array(c.val, c.nnz)
        if copy:
            ip, ix, dv = ip.copy(), ix.copy(), dv.copy()
        return cls(ip, ix, dv, (c.nrow, c.ncol))

    def __matmul__(self, x):
        x = np.asarray(x, dtype=np.float64)
        if self._rows is None:
            self._rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        y = np.zeros(self.shape[0])
        np.add.at(y, self._rows, self.data * x[self.indices])
        return y

    def toarray(self):
        a = np.zeros(self.shape)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        np.add.at(a, (rows, self.indices), self.data)
        return a

    def diagonal(self):
        d = np.zeros(min(self.shape))
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        on = rows == self.indices
        d[rows[on]] = self.data[on]
        return d


class Problem:
    """One contact problem (fl_problem.h): kind 'local' (u = W gamma + q) or 'global'
    (A (v - v*) = J^T gamma, u = J v + b). Arrays are numpy views of the library's memory,
    valid while the Problem lives; treat them as read-only."""

    def __init__(self, ptr, owner=None, free=True, source=None):
        self._p = ptr
        self._owner = owner  # keeps a world (scene steps) alive
        self._free = free
        self.source = source  # the FCLIB file it was loaded from, for save_solution
        self._local = None
        self._B = None
        self._Bm = None

    @classmethod
    def load_fclib(cls, path):
        """An FCLIB file (every field validated; errors name the file and the HDF5 path)."""
        out = ctypes.c_void_p()
        _check(F.fl_problem_load_fclib(_b(os.fspath(path)), ctypes.byref(out)))
        return cls(ctypes.cast(out, ctypes.POINTER(F.ProblemS)), source=os.fspath(path))

    @classmethod
    def example(cls, name):
        """A built-in example problem ("box_on_plane", ...)."""
        out = ctypes.c_void_p()
        _check(F.fl_problem_create_example(_b(name), ctypes.byref(out)))
        return cls(ctypes.cast(out, ctypes.POINTER(F.ProblemS)))

    def __del__(self):
        self._release()
        if getattr(self, "_free", False) and self._p:
            F.fl_problem_free(self._p)
            self._p = None

    @property
    def _s(self):
        return self._p.contents

    kind = property(lambda self: "local" if self._s.kind == 1 else "global")
    name = property(lambda self: self._s.name.decode())
    nv = property(lambda self: self._s.nv)
    nc = property(lambda self: self._s.nc)
    nh = property(lambda self: self._s.nh)
    nrows = property(lambda self: 3 * self._s.nc + self._s.nh)
    dt = property(lambda self: self._s.dt)
    mu = property(lambda self: _array(self._s.mu, self._s.nc))
    phi0 = property(lambda self: _array(self._s.phi0, self._s.nc))
    vstar = property(lambda self: _array(self._s.vstar, self._s.nv))
    v0 = property(lambda self: _array(self._s.v0, self._s.nv))
    b = property(lambda self: _array(self._s.b, self.nrows if self.kind == "global" else 0))
    q = property(lambda self: _array(self._s.q, 3 * self._s.nc if self.kind == "local" else 0))
    A = property(lambda self: Csr._from(self._s.A))
    J = property(lambda self: Csr._from(self._s.J))
    W = property(lambda self: Csr._from(self._s.W))

    def __repr__(self):
        return "<frictionlab.Problem %s: %s, %d contacts, %d dofs, %d bilateral rows>" % (
            self.name, self.kind, self.nc, self.nv, self.nh)

    def local_form(self):
        """(W, q) over the contact rows: the problem's own for a local problem; for a global one
        W = J A^-1 J^T + diag(R_n, 0, 0), q = J v* + b - (vhat_n, 0, 0) (fl_problem_local_form;
        no bilateral rows). Copies, computed once."""
        if self._local is None:
            if self.kind == "local":
                self._local = (self.W, self.q)
            else:
                dyn = self._dynamics()
                W = ctypes.POINTER(F.Csr)()
                q = np.zeros(3 * self.nc + 1)
                _check(F.fl_problem_local_form(self._p, dyn, ctypes.byref(W),
                                               q.ctypes.data_as(F.P_double)))
                Wc = Csr._from(W, copy=True)
                F.fl_csr_free(W)
                self._local = (Wc, q[:3 * self.nc])
        return self._local

    def _dynamics(self):
        if self._B is None:
            d = ctypes.c_void_p()
            _check(F.fl_dynamics_create(self._p, ctypes.byref(d)))
            self._B = d
        return self._B

    def velocities(self, gamma, out=None):
        """v = v* + A^-1 J^T gamma: the velocities impulses gamma give (global problems)."""
        if self._Bm is None:
            B = F.fl_dynamics_JAinv(self._dynamics())
            if not B:
                _check(-1)
            self._Bm = Csr._from(B)
        v = self.vstar + _transpose_matvec(self._Bm, np.asarray(gamma, dtype=np.float64))
        if out is not None:
            out[:] = v
            return out
        return v

    def metrics(self, v, gamma, norm="fclib"):
        """Every common metric of (v, gamma) and the merit (fl_problem_metrics, fl_metrics_merit)."""
        m = F.Metrics()
        _check(F.fl_problem_metrics(self._p, _ptr(v), _ptr(gamma), NORMS[norm], ctypes.byref(m)))
        d = {n: getattr(m, n) for n in F.METRIC_NAMES}
        d["merit"] = F.fl_metrics_merit(ctypes.byref(m), math.nan)
        return d

    def _release(self):
        if getattr(self, "_B", None) is not None:
            self._Bm = None
            F.fl_dynamics_free(self._B)
            self._B = None


def _transpose_matvec(B, x):
    rows = np.repeat(np.arange(B.shape[0]), np.diff(B.indptr))
    y = np.zeros(B.shape[1])
    np.add.at(y, B.indices, B.data * x[rows])
    return y


def _ptr(a):
    if a is None:
        return None
    a = np.ascontiguousarray(a, dtype=np.float64)
    return a.ctypes.data_as(F.P_double)


HISTORY_COLUMNS = ["iter", "time", "error", "merit", "momentum", "objective", "step_length",
                   "inner_iters"]  # iters.csv's columns (harness/output/results.c)


def _history(hptr, n):
    cols = {c: np.empty(n) for c in HISTORY_COLUMNS}
    for k in range(n):
        h = hptr[k]
        for c, f in zip(HISTORY_COLUMNS, ("iter", "t", "error", "merit", "momentum", "objective",
                                          "step", "inner_iters")):
            cols[c][k] = getattr(h, f)
    try:
        import pandas as pd
        df = pd.DataFrame(cols)
        df["iter"] = df["iter"].astype(int)
        df["inner_iters"] = df["inner_iters"].astype(int)
        return df
    except ImportError:
        return cols


class Solution:
    """What a solve returned: reactions (gamma: 3 nc contact impulses, normal first, then nh
    bilateral ones), velocities (v, nv; None for a local problem), u (J v + b or W gamma + q),
    merit (the common merit, the number `solve` prints), reason, iters, solve_s, history (a
    pandas frame with iters.csv's columns), metrics (dict)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return "<frictionlab.Solution %s on %s: %s after %d iterations, merit %.3g>" % (
            self.solver, self.problem.name, self.reason, self.iters, self.merit)


class Score:
    def __init__(self, s):
        self.reason_code = s.reason
        self.reason = F.fl_reason_name(s.reason).decode()
        self.merit = s.merit
        self.metrics = {n: getattr(s.metrics, n) for n in F.METRIC_NAMES}
        self.v_from_gamma = bool(s.v_from_gamma)

    def __repr__(self):
        return "<frictionlab.Score merit %.3g, %s>" % (self.merit, self.reason)


def _options_string(options):
    if options is None:
        return ""
    if isinstance(options, str):
        return options
    return ",".join("%s=%s" % (k, v) for k, v in options.items())


def solve(problem, solver, options=None, norm="fclib", v=None, gamma=None):
    """Solves problem with a registered solver (built-in, plug-in or Python) as `frictionlab
    solve` does: the merit evaluated at every iteration (error_every=1) with normalization
    `norm`, then `options` ("k=v,k=v" or a dict; keys may carry the solver's prefix). v, gamma:
    a guess, used when the solver's warm_start option is set. Returns a Solution; a failed solve
    raises FrictionLabError (an unsupported problem: code FL_ERR_UNSUPPORTED)."""
    s = ctypes.c_void_p()
    _check(F.fl_solver_create(_b(solver), ctypes.byref(s)))
    try:
        _check(F.fl_solver_set_option(s, b"error_every", b"1"))
        _check(F.fl_solver_set_option(s, b"norm", _b(norm)))
        _check(F.fl_solver_set_options(s, _b(_options_string(options))))
        _check(F.fl_solver_setup(s, problem._p))
        nv, nr = problem.nv, problem.nrows
        vv = np.zeros(max(nv, 1)) if v is None else np.array(v, dtype=np.float64)
        gg = np.zeros(max(nr, 1)) if gamma is None else np.array(gamma, dtype=np.float64)
        res = F.Result()
        rc = F.fl_solver_solve(s, problem._p, vv.ctypes.data_as(F.P_double) if nv else None,
                               gg.ctypes.data_as(F.P_double), ctypes.byref(res))
        pyexc = _PY_ERRORS.pop(solver, None)
        if rc < 0 and pyexc is not None:
            raise FrictionLabError(rc, F.fl_errmsg().decode(errors="replace")) from pyexc
        _check(rc)
        n = ctypes.c_int()
        h = F.fl_solver_history(s, ctypes.byref(n))
        hist = _history(h, n.value)
        last = h[n.value - 1] if n.value else None
        m = F.fl_solver_final_metrics(s)
        met = {k: getattr(m.contents, k) for k in F.METRIC_NAMES} if m else {}
        merit = last.merit if last is not None and last.iter == res.iters and \
            not math.isnan(last.merit) else (F.fl_metrics_merit(m, math.nan) if m else math.inf)
        gam = gg[:nr].copy()
        vel = vv[:nv].copy() if problem.kind == "global" else None
        u = np.zeros(nr)
        if problem.kind == "global":
            u = problem.J @ vel + problem.b if nr else u
        elif nr:
            W, q = problem.local_form()
            u = W @ gam + q
        return Solution(problem=problem, solver=solver, reactions=gam, gamma=gam,
                        velocities=vel, v=vel, u=u, merit=merit, reason_code=res.reason,
                        reason=F.fl_reason_name(res.reason).decode(), iters=res.iters,
                        solve_s=res.solve_s, setup_s=res.setup_s, history=hist, metrics=met)
    finally:
        F.fl_solver_destroy(s)


def score(problem, v, gamma, norm="fclib", tol=1e-8):
    """Scores an answer computed elsewhere with the merit and reason the harness gives its own
    solvers (fl_solution_score): CONVERGED_EXACT when merit <= tol, else DIVERGED_MAX_ITER
    (DIVERGED_NAN when not finite). v may be None (local problems, or v from gamma)."""
    out = F.Score()
    g = np.ascontiguousarray(gamma, dtype=np.float64)
    vv = None if v is None else np.ascontiguousarray(v, dtype=np.float64)
    _check(F.fl_solution_score(problem._p, _ptr(vv), g.ctypes.data_as(F.P_double), NORMS[norm],
                               tol, ctypes.byref(out)))
    return Score(out)


def save_solution(problem, path, v, gamma, source=None):
    """Writes an answer in FCLIB's /solution layout (fl_solution_save): into a copy of the
    problem's own FCLIB file when it came from one (or `source`), else with the problem as
    FrictionLab writes it."""
    src = source or problem.source
    g = np.ascontiguousarray(gamma, dtype=np.float64)
    vv = None if v is None else np.ascontiguousarray(v, dtype=np.float64)
    _check(F.fl_solution_save(problem._p, _b(os.fspath(src)) if src else None, _ptr(vv),
                              g.ctypes.data_as(F.P_double), _b(os.fspath(path))))


def read_solution(problem, path):
    """(v or None, gamma) stored in an FCLIB file's /solution, checked against problem."""
    v = np.zeros(max(problem.nv, 1))
    g = np.zeros(max(problem.nrows, 1))
    have = ctypes.c_int()
    _check(F.fl_solution_read(problem._p, _b(os.fspath(path)), v.ctypes.data_as(F.P_double),
                              g.ctypes.data_as(F.P_double), ctypes.byref(have)))
    return (v[:problem.nv] if have.value else None), g[:problem.nrows]


#---- helpers for solvers written in numpy ----

def project_cones(x, mu):
    """The Euclidean projection of each contact's (n, t1, t2) onto its cone ||t|| <= mu n:
    x is (nc, 3) or 3 nc, mu (nc); returns a new array of x's shape (fl_cone_project's formula)."""
    x = np.asarray(x, dtype=np.float64)
    shape = x.shape
    x = x.reshape(-1, 3)
    mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), (len(x),))
    n, t = x[:, 0], x[:, 1:]
    r = np.linalg.norm(t, axis=1)
    out = x.copy()
    polar = mu * r <= -n
    edge = ~(r <= mu * n) & ~polar
    a = (n[edge] + mu[edge] * r[edge]) / (1 + mu[edge] ** 2)
    out[polar] = 0
    out[edge, 0] = a
    out[edge, 1:] = (mu[edge] * a / r[edge])[:, None] * t[edge]
    return out.reshape(shape)


def de_saxce(u, mu):
    """u + (mu ||u_t||, 0, 0) per contact (De Saxce's correction, the natural map's uhat):
    u is (nc, 3) or 3 nc; returns a new (nc, 3) array."""
    u = np.array(u, dtype=np.float64).reshape(-1, 3)
    u[:, 0] += np.asarray(mu) * np.linalg.norm(u[:, 1:], axis=1)
    return u


#---- the registry ----

def solvers(include_peers=False):
    """Registered solver names with their summary and origin (None: built in; else the
    plug-in's path or 'python'): {name: (summary, origin)}."""
    out = {}
    lst = F.fl_solver_list()
    k = 0
    while lst[k]:
        name = lst[k].decode()
        ops = F.fl_solver_find(lst[k])
        caps = F.fl_solver_ops_caps(ops)
        if include_peers or not caps & (F.CAP_PEER | F.CAP_GPU):
            o = F.fl_solver_ops_origin(ops)
            out[name] = (F.fl_solver_ops_summary(ops).decode(), o.decode() if o else None)
        k += 1
    return out


def solver_options(name):
    """A solver's own option table: {key: (type, default, lo, hi, choices, help)}."""
    ops = F.fl_solver_find(_b(name))
    if not ops:
        raise FrictionLabError(-5, "unknown solver '%s'" % name)
    t = F.fl_solver_ops_options(ops)
    out = {}
    k = 0
    while t and t[k].key:
        d = t[k]
        out[d.key.decode()] = (("int", "real", "bool", "enum", "string")[d.type], d.dflt, d.lo,
                               d.hi, d.choices.decode() if d.choices else None,
                               d.help.decode() if d.help else "")
        k += 1
    return out


def load_plugin(path):
    """Loads a solver plug-in (fl_plugin_load); returns the number of solvers it added."""
    return _check(F.fl_plugin_load(_b(os.fspath(path))))


def load_plugin_path():
    """Loads the plug-ins of $FL_PLUGIN_PATH and of the installed folder; returns the number of
    solvers added and the folders searched."""
    n = _check(F.fl_plugin_load_search_path())
    buf = ctypes.create_string_buffer(8192)
    F.fl_plugin_search_path(buf, len(buf))
    return n, buf.value.decode().split(":")


def unregister_solver(name):
    _check(F.fl_solver_unregister(_b(name)))
    _PY_SOLVERS.pop(name, None)


#---- solvers written in Python ----

_PY_SOLVERS = {}  # name -> _PySolver (its ctypes callbacks must outlive the registration)
_PY_ERRORS = {}   # name -> the exception of its last solve


class Iteration:
    """What a Python solver's function gets besides the arrays: record() ends each iteration."""

    def __init__(self, s, problem, v, gamma, vptr, gptr, options, auto_v):
        self._s, self.problem, self.v, self.gamma = s, problem, v, gamma
        self._vptr, self._gptr = vptr, gptr
        self.options = options
        self.k = 0
        self.stopped = False
        self._auto_v = auto_v

    def record(self, error, **fields):
        """Records iteration k (0 = the guess) with the solver's own residual `error` (and any
        of fl_iter_stat's fields: objective, step, step_norm, ...); the common merit is measured
        on (v, gamma) as they are now. Returns True when the solve must stop (converged, out of
        budget, diverged): the convergence test is the library's, on `error`."""
        if self._auto_v and self.problem.kind == "global" and self.problem.nv:
            self.problem.velocities(self.gamma, out=self.v)
        st = F.IterStat()
        F.fl_iter_stat_init(ctypes.byref(st), self.k)
        st.error = float(error)
        for f, x in fields.items():
            setattr(st, f, x)
        F.fl_solver_set_iterate(self._s, self._vptr if self.problem.kind == "global" else None,
                                self._gptr)
        r = F.fl_solver_record(self._s, ctypes.byref(st))
        self.k += 1
        self.stopped = r != 0
        return self.stopped


class _PySolver:
    def __init__(self, name, fn, options, summary, caps, local_form):
        self.name, self.fn, self.local_form = name, fn, local_form
        self.keys = list(options)
        nopt = len(self.keys)
        self.table = (F.OptionDesc * (nopt + 1))()
        self._keep = []
        for k, key in enumerate(self.keys):
            spec = options[key]
            if not isinstance(spec, (tuple, list)):
                spec = (spec,)
            dflt = float(spec[0])
            lo = float(spec[1]) if len(spec) > 1 else -math.inf
            hi = float(spec[2]) if len(spec) > 2 else math.inf
            hlp = spec[3] if len(spec) > 3 else ""
            kb, hb = _b(key), _b(hlp)
            self._keep += [kb, hb]
            self.table[k] = F.OptionDesc(kb, F.OPT_REAL, 8 * k, lo, hi, dflt, None, hb)
        self._setup = F.SETUP_FN(lambda s, p: 0)
        self._solve = F.SOLVE_FN(self._run)
        self._view = F.VIEW_FN(0)
        self._destroy = F.DESTROY_FN(0)
        self.nameb, self.summaryb = _b(name), _b(summary or ("Python solver " + name))
        self.ops = F.SolverOps(F.ABI_VERSION, self.nameb, self.summaryb, 8 * max(nopt, 1),
                               self.table if nopt else None, 0, caps, self._setup, self._solve,
                               self._view, self._destroy, None)

    def _run(self, s, pp, vptr, gptr):
        try:
            prob = Problem(pp, free=False)
            nr = prob.nrows
            gamma = _array(gptr, nr)
            v = _array(vptr, prob.nv) if prob.kind == "global" and vptr else None
            optp = F.fl_solver_opts(s)
            opts = {}
            if self.keys:
                vals = _array(ctypes.cast(optp, F.P_double), len(self.keys))
                opts = dict(zip(self.keys, (float(x) for x in vals)))
            it = Iteration(s, prob, v, gamma, vptr, gptr, opts, self.local_form)
            try:
                self.fn(prob, gamma, v, it)
            finally:
                prob._release()
            if not it.stopped:
                raise RuntimeError("returned before record() said to stop")
            return F.fl_solver_exit_code(s)
        except BaseException as e:  # never let an exception cross into C
            _PY_ERRORS[self.name] = e
            msg = "python solver %s: %s: %s" % (self.name, type(e).__name__, e)
            return F.fl_seterr(-11, b"%s", _b(msg))  # FL_ERR_LIBRARY


def register_solver(name, fn, options=None, summary=None, local_form=True,
                    caps=F.CAP_RIGID | F.CAP_COMPLIANT | F.CAP_LOCAL | F.CAP_WARMSTART):
    """Registers fn as solver `name` through the plug-in interface (fl_solver_register_ops with
    a table of ctypes callbacks), so that it is created, set, solved, measured and profiled like
    a built-in solver, in this process.

    fn(problem, gamma, v, it): problem is a Problem (use problem.local_form() for W, q and
    problem.mu); gamma (3nc+nh) and v (nv, None for local problems) are numpy views of the
    solve's arrays, holding the guess: update them in place, and call it.record(error) once per
    iterate, the guess first; stop when it returns True. With local_form (default) the velocities
    of a global problem are set from gamma (v = v* + A^-1 J^T gamma) before each record.
    options: {key: default} or {key: (default, lo, hi, help)}, real numbers, read in it.options
    and set like any solver's ("name.key=value")."""
    ps = _PySolver(name, fn, options or {}, summary, caps, local_form)
    _check(F.fl_solver_register_ops(ctypes.byref(ps.ops), ctypes.sizeof(ps.ops), b"python"))
    _PY_SOLVERS[name] = ps
    return name


def python_solver(name, options=None, summary=None, **kw):
    """Decorator form of register_solver."""
    def deco(fn):
        register_solver(name, fn, options=options, summary=summary, **kw)
        return fn
    return deco


#---- performance profiles ----

class Profile:
    """Dolan-More profiles of problems x solvers, with `frictionlab profile`'s costs: the time
    (s) and iteration of the first record whose common merit is <= tol (inf: never), from solves
    run with solve()'s (and the harness's) defaults. costs: a pandas frame with costs.csv's
    columns (problem, solver, solved, time_s, iterations)."""

    def __init__(self, problems, solvers_, time, iters, tol, solutions):
        self.problems, self.solvers, self.tol = problems, solvers_, tol
        self.time, self.iters = time, iters  # (np x ns) costs
        self.solutions = solutions
        rows = []
        for i, p in enumerate(problems):
            for j, s in enumerate(solvers_):
                rows.append((p, s, int(np.isfinite(time[i, j])), time[i, j], iters[i, j]))
        try:
            import pandas as pd
            self.costs = pd.DataFrame(rows, columns=["problem", "solver", "solved", "time_s",
                                                     "iterations"])
        except ImportError:
            self.costs = rows

    def _cost(self, by):
        # by iterations the cost is the iterates evaluated, iterations + 1 (profile.c)
        return self.time if by == "time" else self.iters + 1

    def rho(self, tau, by="iterations"):
        """rho[s, t]: the fraction of problems solver s solves within tau[t] times the best."""
        c = self._cost(by)
        tau = np.atleast_1d(np.asarray(tau, dtype=np.float64))
        best = c.min(axis=1)
        out = np.zeros((len(self.solvers), len(tau)))
        for i in range(len(self.problems)):
            if not np.isfinite(best[i]):
                continue
            for j in range(len(self.solvers)):
                if not np.isfinite(c[i, j]):
                    continue
                r = c[i, j] / best[i] if best[i] > 0 else (1.0 if c[i, j] == 0 else math.inf)
                out[j] += (r <= tau * (1 + 1e-12)) / len(self.problems)
        return out

    def ranking(self, by="iterations"):
        """Solvers best first: by the fraction of problems on which each is the best (rho(1)),
        then by the fraction it solves at all (rho(inf)), then by the area under its profile
        over tau in [1, 1e3] (log scale). [(solver, best, solved, area)]."""
        taus = np.logspace(0, 3, 200)
        r = self.rho(taus, by)
        area = np.trapz(r, np.log10(taus), axis=1) / 3.0
        solved = self.rho([math.inf], by)[:, 0]
        rows = [(s, r[j, 0], solved[j], area[j]) for j, s in enumerate(self.solvers)]
        return sorted(rows, key=lambda x: (-x[1], -x[2], -x[3]))


def profile(problems, solvers_, tol=1e-6, options=None, norm="fclib"):
    """Solves every problem with every solver (built-in, plug-in or Python) and returns their
    Profile. problems: Problems or FCLIB paths; options: as for solve, given to every solver. A
    pair that fails or is unsupported costs inf, as in `frictionlab profile`."""
    probs = [p if isinstance(p, Problem) else Problem.load_fclib(p) for p in problems]
    time = np.full((len(probs), len(solvers_)), math.inf)
    iters = np.full((len(probs), len(solvers_)), math.inf)
    sols = {}
    for i, p in enumerate(probs):
        for j, s in enumerate(solvers_):
            try:
                sol = solve(p, s, options=options, norm=norm)
            except FrictionLabError as e:
                sols[(p.name, s)] = e
                continue
            sols[(p.name, s)] = sol
            h = sol.history
            ok = np.nonzero(np.asarray(h["merit"]) <= tol)[0]
            if len(ok):
                time[i, j] = np.asarray(h["time"])[ok[0]]
                iters[i, j] = np.asarray(h["iter"])[ok[0]]
    return Profile([p.name for p in probs], list(solvers_), time, iters, tol, sols)


#---- scenes ----

class _WorldHead(ctypes.Structure):  # the first fields of fl_world (sim/fl_world.h)
    _fields_ = [("name", ctypes.c_char * 64), ("gravity", ctypes.c_double * 3),
                ("dt", ctypes.c_double), ("duration", ctypes.c_double)]


class _World:
    def __init__(self, scene, settings=()):
        arr = (ctypes.c_char_p * max(len(settings), 1))(*[_b(x) for x in settings])
        w = ctypes.c_void_p()
        scene = os.fspath(scene)
        if scene.endswith(".xml"):
            if F.fl_world_from_mjcf is None:
                raise FrictionLabError(-9, "this libfrictionlab reads no MJCF")
            _check(F.fl_world_from_mjcf(_b(scene), len(settings), arr, ctypes.byref(w)))
        elif scene.endswith(".json"):
            if settings:
                raise ValueError("scene files take no settings here")
            _check(F.fl_world_load_json(_b(scene), ctypes.byref(w)))
        else:
            _check(F.fl_scene_create(_b(scene), len(settings), arr, ctypes.byref(w)))
        self.w = w

    head = property(lambda self: ctypes.cast(self.w, ctypes.POINTER(_WorldHead)).contents)

    def __del__(self):
        if getattr(self, "w", None):
            F.fl_world_free(self.w)
            self.w = None


def _make_solver(name, options, error_every="0"):
    s = ctypes.c_void_p()
    _check(F.fl_solver_create(_b(name), ctypes.byref(s)))
    try:
        _check(F.fl_solver_set_option(s, b"error_every", _b(error_every)))
        _check(F.fl_solver_set_options(s, _b(_options_string(options))))
    except FrictionLabError:
        F.fl_solver_destroy(s)
        raise
    return s


def scene_problem(scene, step=0, solver="sap", settings=(), options=None):
    """The contact problem of step `step` of a scene (a canonical scene's name, a scene file
    .json, an MJCF model .xml), after stepping it `step` times with `solver`: a Problem (global,
    with the stepper's warm-start guess), valid while it lives."""
    world = _World(scene, settings)
    s = _make_solver(solver, options) if step > 0 else None
    info = F.StepInfo()
    try:
        for _ in range(step):
            _check(F.fl_world_step(world.w, s, ctypes.byref(info)))
        _check(F.fl_world_prepare(world.w, ctypes.byref(info)))
    finally:
        if s:
            F.fl_solver_destroy(s)
    p = F.fl_world_problem(world.w)
    return Problem(p, owner=world, free=False)


def run_scene(scene, solvers_, steps=None, settings=(), options=None, every=1):
    """Steps a scene with each solver (registered solvers and, with MuJoCo, its peers
    "mujoco-newton", ...) as `frictionlab run` does (solvers evaluate the merit only on their
    final iterate, error_every=0) and returns the observables as a pandas frame with
    observables.csv's columns: step, solver and every observable of the world. steps: default
    the scene's duration / dt."""
    import pandas as pd
    if isinstance(solvers_, str):
        solvers_ = solvers_.split(",")
    frames = []
    for name in solvers_:
        world = _World(scene, settings)
        n = steps if steps is not None else int(round(world.head.duration / world.head.dt))
        nobs = F.fl_world_nobs(world.w)
        cols = [F.fl_world_obs_name(world.w, i).decode() for i in range(nobs)]
        s = peer = None
        if F.fl_peer_find(_b(name)):
            opts = [_b(x) for x in (options or [])] if not isinstance(options, dict) else \
                [_b("%s=%s" % kv) for kv in options.items()]
            arr = (ctypes.c_char_p * max(len(opts), 1))(*opts)
            peer = ctypes.c_void_p()
            _check(F.fl_peer_create(_b(name), world.w, len(opts), arr, None, ctypes.byref(peer)))
            st = F.fl_peer_stepper(peer)
        else:
            s = _make_solver(name, options)
            st = F.fl_stepper_solver(s)
        rows = []
        vals = np.zeros(max(nobs, 1))
        info = F.StepInfo()
        try:
            for k in range(n):
                _check(st.step(st.self, world.w, ctypes.byref(info)))
                _check(F.fl_world_observe(world.w, vals.ctypes.data_as(F.P_double)))
                if k % every == 0 or k == n - 1:
                    rows.append([k, name] + list(vals[:nobs]))
        finally:
            if s:
                F.fl_solver_destroy(s)
            if peer:
                F.fl_peer_free(peer)
        frames.append(pd.DataFrame(rows, columns=["step", "solver"] + cols))
    return pd.concat(frames, ignore_index=True)
