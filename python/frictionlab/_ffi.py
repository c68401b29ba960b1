# SPDX-License-Identifier: Apache-2.0
"""ctypes declarations of libfrictionlab's public C API (docs/api.md).

The structs are laid out here by hand, as the installed headers declare them; at import the
layout is checked against the library actually loaded (fl_api_sizeof), and a library of another
ABI version is refused, so that a mismatch is an ImportError that says why, never garbage.
"""
import ctypes
import ctypes.util
import os

ABI_VERSION = 1  # FL_ABI_VERSION of the headers this module was written against

c_int, c_uint, c_long, c_double, c_size_t = (ctypes.c_int, ctypes.c_uint, ctypes.c_long,
                                            ctypes.c_double, ctypes.c_size_t)
c_char_p, c_void_p, POINTER = ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER
c_int32, c_int64 = ctypes.c_int32, ctypes.c_int64
P_double, P_int32 = POINTER(c_double), POINTER(c_int32)


def _candidates():
    env = os.environ.get("FRICTIONLAB_LIBRARY")
    if env:
        yield env
        return
    try:  # written by cmake --install
        from . import _libpath
        yield _libpath.LIBRARY
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    # the source tree: python/frictionlab/ beside build/
    yield os.path.join(here, "..", "..", "build", "libfrictionlab.so.%d" % ABI_VERSION)
    found = ctypes.util.find_library("frictionlab")
    if found:
        yield found
    yield "libfrictionlab.so.%d" % ABI_VERSION


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path + " (no such file)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("frictionlab: libfrictionlab not found; set FRICTIONLAB_LIBRARY to its path "
                      "(build/libfrictionlab.so in a build tree). Tried: " + "; ".join(tried))


lib, LIBRARY_PATH = _load()


class Csr(ctypes.Structure):
    _fields_ = [("nrow", c_int32), ("ncol", c_int32), ("nnz", c_int32),
                ("rowptr", P_int32), ("col", P_int32), ("val", P_double)]


class OptionDesc(ctypes.Structure):
    _fields_ = [("key", c_char_p), ("type", c_int), ("offset", c_size_t), ("lo", c_double),
                ("hi", c_double), ("dflt", c_double), ("choices", c_char_p), ("help", c_char_p)]


OPT_INT, OPT_REAL, OPT_BOOL, OPT_ENUM, OPT_STRING = range(5)


class ProblemS(ctypes.Structure):
    _fields_ = [("kind", c_int), ("nv", c_int32), ("nc", c_int32), ("nh", c_int32),
                ("ncl", c_int32), ("dt", c_double), ("max_recovery", c_double),
                ("name", ctypes.c_char * 128),
                ("v0", P_double), ("vstar", P_double), ("A", POINTER(Csr)),
                ("clique_ptr", P_int32), ("clique_dof", P_int32), ("dof_clique", P_int32),
                ("J", POINTER(Csr)), ("b", P_double), ("W", POINTER(Csr)), ("q", P_double),
                ("phi0", P_double), ("mu", P_double), ("stiffness", P_double), ("tau_d", P_double),
                ("clique_a", P_int32), ("clique_b", P_int32), ("point", P_double),
                ("frame", P_double), ("feature", POINTER(c_int64)), ("gamma_guess", P_double),
                ("adiag_hint", P_double), ("g0", P_double), ("compliance", P_double),
                ("lo", P_double), ("hi", P_double), ("buffer_", c_void_p)]


METRIC_NAMES = ["natmap", "natmap_raw", "momentum", "signorini", "cone", "dual", "dissipation",
                "penetration", "bilateral", "norm_q", "norm_u", "norm_gamma"]


class Metrics(ctypes.Structure):
    _fields_ = [(n, c_double) for n in METRIC_NAMES]


class IterStat(ctypes.Structure):
    _fields_ = [("iter", c_int)] + [(n, c_double) for n in (
        "t", "error", "objective", "step", "step_norm", "gradient", "inner_residual", "err_normal",
        "err_friction", "merit", "momentum")] + [(n, c_int) for n in (
            "nactive", "nstick", "nslip", "nchange", "inner_iters", "neval")]


class Result(ctypes.Structure):
    _fields_ = [("reason", c_int), ("iters", c_int), ("error", c_double), ("solve_s", c_double),
                ("setup_s", c_double), ("monitor_s", c_double), ("history_len", c_int),
                ("history_lost", c_long), ("device_s", c_double), ("device_bytes", c_double),
                ("lift_s", c_double), ("fallback", c_int)]


class Score(ctypes.Structure):
    _fields_ = [("reason", c_int), ("merit", c_double), ("metrics", Metrics),
                ("v_from_gamma", c_int)]


SETUP_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(ProblemS))
SOLVE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(ProblemS), P_double, P_double)
VIEW_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
DESTROY_FN = ctypes.CFUNCTYPE(None, c_void_p)


class SolverOps(ctypes.Structure):
    _fields_ = [("abi_version", c_int), ("name", c_char_p), ("summary", c_char_p),
                ("opts_size", c_size_t), ("options", POINTER(OptionDesc)),
                ("data_size", c_size_t), ("caps", c_uint), ("setup", SETUP_FN),
                ("solve", SOLVE_FN), ("view", VIEW_FN), ("destroy", DESTROY_FN),
                ("common_defaults", c_char_p)]


class StepInfo(ctypes.Structure):
    _fields_ = [("step", c_int32), ("t", c_double), ("nbody_pairs", c_int32), ("nc", c_int32),
                ("nh", c_int32), ("collide_s", c_double), ("assemble_s", c_double),
                ("solve_s", c_double), ("integrate_s", c_double), ("collide_cpu_s", c_double),
                ("assemble_cpu_s", c_double), ("warm_matched", c_int), ("res", Result),
                ("met", Metrics)]


STEP_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, POINTER(StepInfo))
HISTORY_FN = ctypes.CFUNCTYPE(POINTER(IterStat), c_void_p, POINTER(StepInfo), POINTER(c_int))


class Stepper(ctypes.Structure):
    _fields_ = [("step", STEP_FN), ("history", HISTORY_FN), ("self", c_void_p)]


CAP_RIGID, CAP_COMPLIANT, CAP_BILATERAL, CAP_LOCAL, CAP_NEEDS_AJ, CAP_WARMSTART = (
    1, 2, 4, 8, 16, 32)
CAP_GPU, CAP_PEER = 64, 512


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


PP = POINTER(c_void_p)
fl_version = _fn("fl_version", c_char_p)
fl_abi_version = _fn("fl_abi_version", c_int)
fl_api_sizeof = _fn("fl_api_sizeof", c_size_t, c_char_p)
fl_errmsg = _fn("fl_errmsg", c_char_p)
fl_strerror = _fn("fl_strerror", c_char_p, c_int)
fl_errname = _fn("fl_errname", c_char_p, c_int)
fl_seterr = lib.fl_seterr  # variadic: (int, const char *fmt, ...)
fl_seterr.restype = c_int
fl_reason_name = _fn("fl_reason_name", c_char_p, c_int)
fl_register_all = _fn("fl_register_all", c_int)
fl_solver_list = _fn("fl_solver_list", POINTER(c_char_p))
fl_solver_find = _fn("fl_solver_find", c_void_p, c_char_p)
fl_solver_ops_summary = _fn("fl_solver_ops_summary", c_char_p, c_void_p)
fl_solver_ops_caps = _fn("fl_solver_ops_caps", c_uint, c_void_p)
fl_solver_ops_options = _fn("fl_solver_ops_options", POINTER(OptionDesc), c_void_p)
fl_solver_ops_origin = _fn("fl_solver_ops_origin", c_char_p, c_void_p)
fl_solver_register_ops = _fn("fl_solver_register_ops", c_int, POINTER(SolverOps), c_size_t,
                             c_char_p)
fl_solver_unregister = _fn("fl_solver_unregister", c_int, c_char_p)
fl_plugin_load = _fn("fl_plugin_load", c_int, c_char_p)
fl_plugin_load_search_path = _fn("fl_plugin_load_search_path", c_int)
fl_plugin_search_path = _fn("fl_plugin_search_path", c_char_p, c_char_p, c_size_t)
fl_solver_create = _fn("fl_solver_create", c_int, c_char_p, PP)
fl_solver_destroy = _fn("fl_solver_destroy", None, c_void_p)
fl_solver_set_options = _fn("fl_solver_set_options", c_int, c_void_p, c_char_p)
fl_solver_set_option = _fn("fl_solver_set_option", c_int, c_void_p, c_char_p, c_char_p)
fl_solver_get_option = _fn("fl_solver_get_option", c_int, c_void_p, c_char_p, c_char_p, c_size_t)
fl_solver_setup = _fn("fl_solver_setup", c_int, c_void_p, POINTER(ProblemS))
fl_solver_solve = _fn("fl_solver_solve", c_int, c_void_p, POINTER(ProblemS), P_double, P_double,
                      POINTER(Result))
fl_solver_history = _fn("fl_solver_history", POINTER(IterStat), c_void_p, POINTER(c_int))
fl_solver_final_metrics = _fn("fl_solver_final_metrics", POINTER(Metrics), c_void_p)
fl_solver_opts = _fn("fl_solver_opts", c_void_p, c_void_p)
fl_solver_set_iterate = _fn("fl_solver_set_iterate", None, c_void_p, P_double, P_double)
fl_solver_record = _fn("fl_solver_record", c_int, c_void_p, POINTER(IterStat))
fl_solver_exit_code = _fn("fl_solver_exit_code", c_int, c_void_p)
fl_iter_stat_init = _fn("fl_iter_stat_init", None, POINTER(IterStat), c_int)
fl_problem_load_fclib = _fn("fl_problem_load_fclib", c_int, c_char_p, PP)
fl_problem_create_example = _fn("fl_problem_create_example", c_int, c_char_p, PP)
fl_problem_free = _fn("fl_problem_free", None, c_void_p)
fl_problem_metrics = _fn("fl_problem_metrics", c_int, POINTER(ProblemS), P_double, P_double, c_int,
                         POINTER(Metrics))
fl_metrics_merit = _fn("fl_metrics_merit", c_double, POINTER(Metrics), c_double)
fl_problem_local_form = _fn("fl_problem_local_form", c_int, POINTER(ProblemS), c_void_p,
                            POINTER(POINTER(Csr)), P_double)
fl_dynamics_create = _fn("fl_dynamics_create", c_int, POINTER(ProblemS), PP)
fl_dynamics_free = _fn("fl_dynamics_free", None, c_void_p)
fl_dynamics_JAinv = _fn("fl_dynamics_JAinv", POINTER(Csr), c_void_p)
fl_csr_free = _fn("fl_csr_free", None, POINTER(Csr))
fl_solution_save = _fn("fl_solution_save", c_int, POINTER(ProblemS), c_char_p, P_double, P_double,
                       c_char_p)
fl_solution_read = _fn("fl_solution_read", c_int, POINTER(ProblemS), c_char_p, P_double, P_double,
                       POINTER(c_int))
fl_solution_score = _fn("fl_solution_score", c_int, POINTER(ProblemS), P_double, P_double, c_int,
                        c_double, POINTER(Score))
fl_scene_create = _fn("fl_scene_create", c_int, c_char_p, c_int, POINTER(c_char_p), PP)
fl_world_load_json = _fn("fl_world_load_json", c_int, c_char_p, PP)
fl_world_free = _fn("fl_world_free", None, c_void_p)
fl_world_prepare = _fn("fl_world_prepare", c_int, c_void_p, POINTER(StepInfo))
fl_world_problem = _fn("fl_world_problem", POINTER(ProblemS), c_void_p)
fl_world_step = _fn("fl_world_step", c_int, c_void_p, c_void_p, POINTER(StepInfo))
fl_world_nobs = _fn("fl_world_nobs", c_int32, c_void_p)
fl_world_obs_name = _fn("fl_world_obs_name", c_char_p, c_void_p, c_int32)
fl_world_observe = _fn("fl_world_observe", c_int, c_void_p, P_double)
fl_stepper_solver = _fn("fl_stepper_solver", Stepper, c_void_p)
fl_peer_find = _fn("fl_peer_find", c_int, c_char_p)
fl_peer_create = _fn("fl_peer_create", c_int, c_char_p, c_void_p, c_int, POINTER(c_char_p),
                     c_char_p, PP)
fl_peer_free = _fn("fl_peer_free", None, c_void_p)
fl_peer_stepper = _fn("fl_peer_stepper", Stepper, c_void_p)
try:
    fl_world_from_mjcf = _fn("fl_world_from_mjcf", c_int, c_char_p, c_int, POINTER(c_char_p), PP)
except AttributeError:  # a library without the MJCF reader
    fl_world_from_mjcf = None


def _check_layout():
    if fl_abi_version() != ABI_VERSION:
        raise ImportError("frictionlab: %s has ABI version %d; this module is written for %d"
                          % (LIBRARY_PATH, fl_abi_version(), ABI_VERSION))
    for cname, py in (("fl_csr", Csr), ("fl_option_desc", OptionDesc), ("fl_problem", ProblemS),
                      ("fl_metrics", Metrics), ("fl_iter_stat", IterStat), ("fl_result", Result),
                      ("fl_score", Score), ("fl_solver_ops", SolverOps),
                      ("fl_step_info", StepInfo), ("fl_stepper", Stepper)):
        want = fl_api_sizeof(cname.encode())
        if want != ctypes.sizeof(py):
            raise ImportError("frictionlab: struct %s is %d bytes in %s but %d here: the module "
                              "and the library disagree (rebuild or reinstall both)"
                              % (cname, want, LIBRARY_PATH, ctypes.sizeof(py)))


_check_layout()
