# SPDX-License-Identifier: Apache-2.0
"""fl_peer_py.py: steps a FrictionLab scene in Drake's MultibodyPlant or in MuJoCo's Python
package, for the peers of peers/peer_py.c (docs/peers.md).

    python fl_peer_py.py SCENE.json

SCENE.json is written by peer_py.c: the peer's name, dt, gravity, the options, the bodies (shape,
pose, velocity, mass, inertia about the centre of mass, material law) and, for MuJoCo, the MJCF
file. The process answers one text line on stdout, "ok {json}" (versions, resolved options) or
"err MESSAGE" (a feature the simulator cannot express), then reads commands on stdin:

    step K\n   [K x ndyn x 6 float64: applied torque (3) and force (3) per dynamic body, world
               frame, at the centre of mass, when the scene has forces]

and writes K records of NH + 13 ndyn float64 (native byte order): the header (below), then per
dynamic body in FrictionLab's order position (3), quaternion (w,x,y,z), velocity (3), angular
velocity (3, world frame). EOF or "quit" ends it. A step that fails (Drake throws, MuJoCo warns) ends the chunk: the steps
before it are sent, it and the rest carry FAILED as their contact count, its message is the
last line on stderr and the exit status is 3.

Header: contacts, solver iterations, time per step (s, measured inside the simulator), then
collision, assembly, set-up, solve, integration times (s), total normal impulse (N s), the
solver's last improvement; NaN where the simulator does not tell.
"""
import ctypes
import json
import math
import os
import sys
import time

import numpy as np

NH = 10
FAILED = -1.0  # header[0] of the steps after a failed one (the message is on stderr)


class Refused(Exception):
    """A scene feature the simulator cannot express (the message names it)."""


def quat_to_mat(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


# ---- Drake ----

class DrakeSim:
    APPROX = {"drake-sap": "sap", "drake-similar": "similar", "drake-lagged": "lagged",
              "drake-tamsi": "tamsi"}

    def __init__(self, sc):
        from pydrake.all import (AddCompliantHydroelasticProperties, AddRigidHydroelasticProperties,
                                 AddContactMaterial, AddMultibodyPlant, Box, Capsule, Convex,
                                 CoulombFriction, Cylinder, DiagramBuilder, HalfSpace,
                                 LogVectorOutput, MultibodyPlantConfig, PiecewisePolynomial,
                                 ProximityProperties, Quaternion, RigidTransform,
                                 RotationalInertia, Simulator, SpatialInertia, SpatialVelocity,
                                 Sphere, TrajectorySource)
        self.tap = None
        tap_path = sc.get("sap_tap")
        if tap_path:
            try:
                lib = ctypes.CDLL(tap_path)
                lib.fl_sap_tap_calls.restype = ctypes.c_long
                lib.fl_sap_tap_iters.argtypes = [ctypes.c_long]
                self.tap = lib
            except OSError:
                self.tap = None
        opt = sc["options"]
        hydro = opt["contact"] == "hydroelastic"
        self.dt = dt = sc["dt"]
        cfg = MultibodyPlantConfig(time_step=dt, discrete_contact_approximation=self.APPROX[sc["peer"]],
                                   contact_model=("hydroelastic_with_fallback" if hydro else "point"),
                                   sap_near_rigid_threshold=opt["beta"],
                                   stiction_tolerance=opt["stiction_tolerance"])
        builder = DiagramBuilder()
        plant, sg = AddMultibodyPlant(cfg, builder)
        plant.mutable_gravity_field().set_gravity_vector(np.array(sc["gravity"], float))
        tmp = sc["tmpdir"]
        self.dyn = []
        for b in sc["bodies"]:
            props = ProximityProperties()
            k = b["stiffness"] if b["stiffness"] is not None else opt["stiffness"]
            AddContactMaterial(dissipation=0.0, point_stiffness=float(k),
                               friction=CoulombFriction(float(b["mu"]), float(b["mu"])), properties=props)
            props.AddProperty("material", "relaxation_time", float(b["tau_d"]))
            t, s = b["shape"], b["size"]
            if t == "plane":
                shape = HalfSpace()
            elif t == "box":
                shape = Box(2 * s[0], 2 * s[1], 2 * s[2])
            elif t == "sphere":
                shape = Sphere(s[0])
            elif t == "capsule":
                shape = Capsule(s[0], 2 * s[1])
            elif t == "cylinder":
                shape = Cylinder(s[0], 2 * s[1])
            elif t == "convex":
                path = os.path.join(tmp, "hull%d.obj" % b["index"])
                with open(path, "w") as f:
                    v = b["vert"]
                    for i in range(0, len(v), 3):
                        f.write("v %.17g %.17g %.17g\n" % (v[i], v[i + 1], v[i + 2]))
                    for face in b["faces"]:
                        f.write("f " + " ".join(str(i + 1) for i in face) + "\n")
                shape = Convex(path)
            else:
                raise Refused("body '%s': shape %s has no Drake equivalent" % (b["name"], t))
            if hydro:
                # compliant bodies with the option's modulus against rigid planes (a pair of
                # rigid geometries falls back to point contact)
                if t == "plane":
                    AddRigidHydroelasticProperties(props)
                else:
                    r = s[0] if t in ("sphere", "capsule", "cylinder") else 0.1
                    if t == "convex":
                        v = np.array(b["vert"]).reshape(-1, 3)
                        r = 0.5 * float(np.min(v.max(0) - v.min(0)))
                    AddCompliantHydroelasticProperties(0.5 * r, opt["hydro_modulus"], props)
            X = RigidTransform(Quaternion(np.array(b["quat"], float) / np.linalg.norm(b["quat"])),
                               np.array(b["pos"], float))
            if not b["dynamic"]:
                plant.RegisterCollisionGeometry(plant.world_body(), X, shape, "g%d" % b["index"], props)
                continue
            I = b["inertia"]
            M = SpatialInertia.MakeFromCentralInertia(
                b["mass"], np.zeros(3), RotationalInertia(I[0], I[4], I[8], I[1], I[2], I[5]))
            body = plant.AddRigidBody("b%d" % b["index"], M)
            plant.RegisterCollisionGeometry(body, RigidTransform(), shape, "g%d" % b["index"], props)
            self.dyn.append((b, body, X))
        plant.Finalize()
        self.plant, self.nq, self.nv = plant, plant.num_positions(), plant.num_velocities()
        self.forces = sc["forces"]
        self.src = None
        if self.forces:
            self.src = builder.AddSystem(TrajectorySource(
                PiecewisePolynomial(np.zeros((self.nv, 1)))))
            builder.Connect(self.src.get_output_port(), plant.get_applied_generalized_force_input_port())
        self.logger = LogVectorOutput(plant.get_state_output_port(), builder, dt)
        self.diagram = builder.Build()
        self.sim = Simulator(self.diagram)
        ctx = self.sim.get_mutable_context()
        ctx.SetTime(sc["t0"])
        pctx = plant.GetMyMutableContextFromRoot(ctx)
        self.qs, self.vs = [], []
        for b, body, X in self.dyn:
            plant.SetFreeBodyPose(pctx, body, X)
            plant.SetFreeBodySpatialVelocity(pctx, body, SpatialVelocity(np.array(b["omega"], float),
                                                                   np.array(b["vel"], float)))
            self.qs.append(body.floating_positions_start())
            self.vs.append(plant.num_positions() + body.floating_velocities_start_in_v())
        # a second context for the contact count (collision on the logged states)
        self.qctx = self.diagram.CreateDefaultContext()
        self.qpctx = plant.GetMyMutableContextFromRoot(self.qctx)
        self.PiecewisePolynomial = PiecewisePolynomial
        self.sim.Initialize()
        self.t = sc["t0"]
        self.error = None
        from importlib.metadata import version
        self.info = {"simulator": "Drake %s" % version("drake"), "approximation": self.APPROX[sc["peer"]],
                     "contact_model": opt["contact"], "sap_tap": self.tap is not None}

    def state_at(self, x):
        out = np.empty(13 * len(self.dyn))
        for i, (q0, v0) in enumerate(zip(self.qs, self.vs)):
            o = out[13 * i:13 * i + 13]
            o[0:3] = x[q0 + 4:q0 + 7]
            o[3:7] = x[q0:q0 + 4]
            o[7:10] = x[v0 + 3:v0 + 6]
            o[10:13] = x[v0:v0 + 3]
        return out

    def count_contacts(self, x):
        self.plant.SetPositionsAndVelocities(self.qpctx, x)
        qo = self.plant.get_geometry_query_input_port().Eval(self.qpctx)
        return len(qo.ComputePointPairPenetration())

    def run(self, k, f):
        dt = self.dt
        if self.forces:
            # zero-order hold of the generalized forces at each step's start time
            nv = self.nv
            tau = np.zeros((nv, k + 1))
            for i, (b, body, X) in enumerate(self.dyn):
                v0 = self.vs[i] - self.nq
                tau[v0:v0 + 6, :k] = f[:, i, :].T
            tau[:, k] = tau[:, k - 1]
            times = self.t + dt * np.arange(k + 1) - 0.5 * dt
            self.src.UpdateTrajectory(self.PiecewisePolynomial.ZeroOrderHold(times, tau))
        log = self.logger.FindMutableLog(self.sim.get_context())
        log.Clear()
        calls0 = self.tap.fl_sap_tap_calls() if self.tap else 0
        x0 = self.plant.GetPositionsAndVelocities(
            self.plant.GetMyContextFromRoot(self.sim.get_context())).copy()
        t1 = self.t + k * dt
        c0 = time.perf_counter()
        try:
            self.sim.AdvanceTo(t1)
        except Exception as e:  # keep the steps taken before it (FAILED marks the rest)
            self.error = "%s: %s" % (type(e).__name__, str(e).replace("\n", " "))
        wall = time.perf_counter() - c0
        ts, xs = log.sample_times(), log.data()
        # the state after each of the k steps: the samples at t + j dt, j = 1..k
        want = self.t + dt * np.arange(1, k + 1)
        idx = np.searchsorted(ts, want - 0.25 * dt)
        ok = (idx < len(ts))
        ok[ok] &= np.abs(ts[idx[ok]] - want[ok]) <= 0.25 * dt
        nok = int(np.argmin(ok)) if not ok.all() else k
        if nok < k and not self.error:
            raise RuntimeError("Drake's state log has %d samples over (%g, %g], expected %d"
                               % (len(ts), self.t, t1, k))
        calls = (self.tap.fl_sap_tap_calls() - calls0) if self.tap else 0
        rec = np.full((k, NH + 13 * len(self.dyn)), np.nan)
        rec[nok:, 0] = FAILED
        prev = x0
        for j in range(nok):
            x = xs[:, idx[j]]
            rec[j, 0] = self.count_contacts(prev)
            if calls == k:
                rec[j, 1] = self.tap.fl_sap_tap_iters(calls0 + j)
            rec[j, 2] = wall / k if nok == k else math.nan
            rec[j, NH:] = self.state_at(x)
            prev = x
        self.t = t1
        return rec


# ---- MuJoCo ----

class MujocoSim:
    def __init__(self, sc):
        import mujoco
        self.mj = mujoco
        self.m = m = mujoco.MjModel.from_xml_path(sc["mjcf"])
        self.d = d = mujoco.MjData(m)
        self.dyn = []
        for b in sc["bodies"]:
            if not b["dynamic"]:
                continue
            bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "b%d" % b["index"])
            j = m.body_jntadr[bid]
            qa, va = m.jnt_qposadr[j], m.jnt_dofadr[j]
            R = quat_to_mat(b["quat"])
            d.qpos[qa:qa + 3] = b["pos"]
            d.qpos[qa + 3:qa + 7] = b["quat"]
            d.qvel[va:va + 3] = b["vel"]
            d.qvel[va + 3:va + 6] = R.T @ np.array(b["omega"], float)  # body frame in MuJoCo
            self.dyn.append((bid, qa, va))
        self.error = None
        self.info = {"simulator": "MuJoCo %s" % mujoco.mj_versionString(),
                     "integrator": mujoco.mjtIntegrator(m.opt.integrator).name,
                     "cone": mujoco.mjtCone(m.opt.cone).name, "solver": mujoco.mjtSolver(m.opt.solver).name,
                     "iterations": int(m.opt.iterations), "tolerance": float(m.opt.tolerance),
                     "ls_iterations": int(m.opt.ls_iterations)}
        T = mujoco.mjtTimer
        self.T = [T.mjTIMER_STEP, T.mjTIMER_FORWARD, T.mjTIMER_POS_COLLISION, T.mjTIMER_POS_MAKE,
                  T.mjTIMER_POS_PROJECT, T.mjTIMER_CONSTRAINT]
        self.fr = np.zeros(6)

    def run(self, k, f):
        mj, m, d = self.mj, self.m, self.d
        rec = np.full((k, NH + 13 * len(self.dyn)), np.nan)
        for j in range(k):
            d.xfrc_applied[:] = 0
            if f is not None:
                for i, (bid, qa, va) in enumerate(self.dyn):
                    d.xfrc_applied[bid, 0:3] = f[j, i, 3:6]
                    d.xfrc_applied[bid, 3:6] = f[j, i, 0:3]
            w0 = [d.timer[t].duration for t in self.T]
            warn0 = [d.warning[i].number for i in range(len(d.warning))]
            mj.mj_step(m, d)
            bad = [i for i in range(len(d.warning)) if d.warning[i].number > warn0[i]]
            if bad:
                self.error = "MuJoCo warning %s at time %g" % (mj.mjtWarning(bad[0]).name, d.time)
                rec[j:, 0] = FAILED
                return rec
            dur = [d.timer[t].duration - w for t, w in zip(self.T, w0)]
            step, fwd, col, make, proj, cons = dur
            ni = max(int(d.nisland), 1)
            its = d.solver_niter[:ni]
            r = rec[j]
            ncon, imp = 0, 0.0
            for c in range(d.ncon):
                if d.contact[c].efc_address < 0:
                    continue
                ncon += 1
                mj.mj_contactForce(m, d, c, self.fr)
                imp += self.fr[0] * m.opt.timestep
            r[0], r[1], r[2] = ncon, int(its.max()), step
            r[3], r[5], r[6], r[7] = col, make + proj, cons, step - fwd
            r[4] = fwd - col - make - proj - cons
            r[8] = imp
            if its[0] > 0:
                r[9] = d.solver[its[0] - 1].improvement
            o = NH
            for bid, qa, va in self.dyn:
                R = quat_to_mat(d.qpos[qa + 3:qa + 7])
                r[o:o + 3] = d.qpos[qa:qa + 3]
                r[o + 3:o + 7] = d.qpos[qa + 3:qa + 7]
                r[o + 7:o + 10] = d.qvel[va:va + 3]
                r[o + 10:o + 13] = R @ d.qvel[va + 3:va + 6]
                o += 13
        return rec


def main():
    out = sys.stdout.buffer
    try:
        sc = json.load(open(sys.argv[1]))
        sim = (DrakeSim if sc["peer"].startswith("drake-") else MujocoSim)(sc)
    except Refused as e:
        out.write(("err %s\n" % e).encode())
        out.flush()
        return 0
    except Exception as e:  # the simulator refused the model: its message
        out.write(("err %s: %s\n" % (type(e).__name__, str(e).replace("\n", " "))).encode())
        out.flush()
        return 0
    sim.info["ndyn"] = len(sim.dyn)
    out.write(("ok %s\n" % json.dumps(sim.info)).encode())
    out.flush()
    inp = sys.stdin.buffer
    nd = len(sim.dyn)
    while True:
        line = inp.readline()
        if not line or line.strip() == b"quit":
            return 0
        word, k = line.split()
        k = int(k)
        f = None
        if sc["forces"]:
            n = 8 * 6 * nd * k
            buf = inp.read(n)
            if len(buf) != n:
                return 0
            f = np.frombuffer(buf, dtype=np.float64).reshape(k, nd, 6)
        try:
            rec = sim.run(k, f)
        except Exception as e:
            sys.stderr.write("%s: %s\n" % (type(e).__name__, str(e).replace("\n", " ")))
            sys.stderr.flush()
            return 3
        out.write(np.ascontiguousarray(rec, dtype=np.float64).tobytes())
        out.flush()
        if sim.error:  # the steps before the failure were sent; the rest are marked FAILED
            sys.stderr.write(sim.error + "\n")
            sys.stderr.flush()
            return 3


if __name__ == "__main__":
    sys.exit(main())
