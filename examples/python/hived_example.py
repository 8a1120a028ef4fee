#!/usr/bin/env python3
"""A cluster manager's first steps with hived from Python, through the C interface
(include/hived/hived_c.h) and ctypes: load a HiveD config, schedule a gang, bind it
(allocate) pod by pod, look at the views, save the state, release it pod by pod, and let
a reservation with a deadline expire. docs/integration.md
("From C, Go and Python") walks through it; CI runs it against the installed package:

    python3 examples/python/hived_example.py <prefix>/lib/libhived_c.so \
        config/examples/two-racks.yaml
"""
import ctypes
import json
import sys


class HivedError(Exception):
    """A hived error: its code name (absl's, e.g. "not-found") and message."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Member(ctypes.Structure):
    _fields_ = [("pod_number", ctypes.c_int32), ("leaf_cell_number", ctypes.c_int32),
                ("gpu_milli", ctypes.c_int32), ("gpu_memory_mib", ctypes.c_int64),
                ("cpu_milli", ctypes.c_int64), ("memory_mib", ctypes.c_int64),
                ("mig_profile", ctypes.c_char_p)]


class RequestDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("vc", ctypes.c_char_p),
                ("priority", ctypes.c_int32), ("leaf_cell_type", ctypes.c_char_p),
                ("pinned_cell_id", ctypes.c_char_p), ("lazy_preemption", ctypes.c_int),
                ("members", ctypes.POINTER(Member)), ("member_count", ctypes.c_size_t),
                ("leaf_cell_types", ctypes.POINTER(ctypes.c_char_p)),
                ("leaf_cell_type_count", ctypes.c_size_t),
                ("has_suggested_nodes", ctypes.c_int),
                ("suggested_nodes", ctypes.POINTER(ctypes.c_char_p)),
                ("suggested_node_count", ctypes.c_size_t)]


class PodDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("uid", ctypes.c_char_p),
                ("leaf_cell_number", ctypes.c_int32), ("node", ctypes.c_char_p),
                ("first_leaf_index", ctypes.c_int32)]


class AllocateInfo(ctypes.Structure):
    _fields_ = [("downgraded", ctypes.c_int), ("reason", ctypes.c_void_p)]


class PodAllocation(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_int32), ("started_gang", ctypes.c_int),
                ("info", AllocateInfo)]


PHASE_FILTERING, PHASE_PREEMPTING = 0, 1
HIVED_OK = 0


class Hived:
    """The library's functions with their C signatures."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        handle = ctypes.c_void_p
        cstr, size = ctypes.c_char_p, ctypes.c_size_t
        out_str = ctypes.POINTER(ctypes.c_void_p)  # char**: freed with hived_free
        sigs = {
            "hived_version": (cstr, []),
            "hived_free": (None, [ctypes.c_void_p]),
            "hived_code_name": (cstr, [ctypes.c_int]),
            "hived_outcome_name": (cstr, [ctypes.c_int]),
            "hived_scheduler_create_from_file": (ctypes.c_int, [cstr, ctypes.POINTER(handle),
                                                                out_str]),
            "hived_scheduler_destroy": (None, [handle]),
            "hived_request_create": (ctypes.c_int, [ctypes.POINTER(RequestDesc),
                                                    ctypes.POINTER(handle), out_str]),
            "hived_request_destroy": (None, [handle]),
            "hived_result_create": (handle, []),
            "hived_result_destroy": (None, [handle]),
            "hived_schedule": (ctypes.c_int, [handle, handle, ctypes.c_int, handle, out_str]),
            "hived_result_outcome": (ctypes.c_int, [handle]),
            "hived_result_reason": (cstr, [handle]),
            "hived_result_pod_count": (size, [handle]),
            "hived_result_pod_node": (cstr, [handle, size]),
            "hived_result_pod_leaf_cell_indices": (ctypes.POINTER(ctypes.c_int32),
                                                   [handle, size, ctypes.POINTER(size)]),
            "hived_allocate": (ctypes.c_int, [handle, handle, handle, ctypes.c_void_p, out_str]),
            "hived_release": (ctypes.c_int, [handle, cstr, out_str]),
            "hived_check_invariants": (ctypes.c_int, [handle, out_str]),
            "hived_save_state": (ctypes.c_int, [handle, out_str, ctypes.POINTER(size), out_str]),
            "hived_nodes_json": (ctypes.c_int, [handle, out_str, ctypes.POINTER(size), out_str]),
            "hived_groups_json": (ctypes.c_int, [handle, out_str, ctypes.POINTER(size), out_str]),
            "hived_allocate_pod": (ctypes.c_int, [handle, handle, handle, ctypes.POINTER(PodDesc),
                                                  ctypes.POINTER(PodAllocation), out_str]),
            "hived_release_pod": (ctypes.c_int, [handle, cstr, cstr, ctypes.POINTER(ctypes.c_int),
                                                 out_str]),
            "hived_schedule_timed": (ctypes.c_int, [handle, handle, ctypes.c_int, ctypes.c_int64,
                                                    ctypes.c_int, ctypes.c_int64, handle,
                                                    out_str]),
            "hived_expire_reservations": (ctypes.c_int, [handle, ctypes.c_int64, out_str,
                                                         ctypes.POINTER(size), out_str]),
        }
        for name, (restype, argtypes) in sigs.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.lib = lib

    def take(self, ptr, length=None):
        """Copies a string the library returned, then frees it."""
        if not ptr.value:
            return ""
        data = ctypes.string_at(ptr.value, length) if length is not None else \
            ctypes.string_at(ptr.value)
        self.lib.hived_free(ptr)
        return data.decode("utf-8")

    def check(self, code, msg):
        if code != HIVED_OK:
            name = self.lib.hived_code_name(code).decode()
            raise HivedError(name, self.take(msg))


class Scheduler:
    def __init__(self, hived, config_path):
        self.h = hived
        self.s = ctypes.c_void_p()
        msg = ctypes.c_void_p()
        hived.check(hived.lib.hived_scheduler_create_from_file(
            config_path.encode(), ctypes.byref(self.s), ctypes.byref(msg)), msg)
        self.result = ctypes.c_void_p(hived.lib.hived_result_create())

    def close(self):
        self.h.lib.hived_result_destroy(self.result)
        self.h.lib.hived_scheduler_destroy(self.s)

    def request(self, name, vc, priority, pods, gpus):
        member = Member(pod_number=pods, leaf_cell_number=gpus)
        desc = RequestDesc(name=name.encode(), vc=vc.encode(), priority=priority,
                           members=ctypes.pointer(member), member_count=1)
        req, msg = ctypes.c_void_p(), ctypes.c_void_p()
        self.h.check(self.h.lib.hived_request_create(ctypes.byref(desc), ctypes.byref(req),
                                                     ctypes.byref(msg)), msg)
        return req

    def schedule(self, req, phase):
        """Returns (outcome name, reason, [(node, [devices])...])."""
        lib, msg = self.h.lib, ctypes.c_void_p()
        self.h.check(lib.hived_schedule(self.s, req, phase, self.result, ctypes.byref(msg)), msg)
        pods = []
        for i in range(lib.hived_result_pod_count(self.result)):
            count = ctypes.c_size_t()
            indices = lib.hived_result_pod_leaf_cell_indices(self.result, i, ctypes.byref(count))
            pods.append((lib.hived_result_pod_node(self.result, i).decode(),
                         [indices[k] for k in range(count.value)]))
        outcome = lib.hived_outcome_name(lib.hived_result_outcome(self.result)).decode()
        return outcome, lib.hived_result_reason(self.result).decode(), pods

    def allocate(self, req):
        msg = ctypes.c_void_p()
        self.h.check(self.h.lib.hived_allocate(self.s, req, self.result, None,
                                               ctypes.byref(msg)), msg)

    def allocate_pod(self, req, name, gpus):
        """Binds one pod of the scheduled gang; returns (slot, started_gang)."""
        pod = PodDesc(name=name.encode(), leaf_cell_number=gpus, first_leaf_index=-1)
        out, msg = PodAllocation(), ctypes.c_void_p()
        self.h.check(self.h.lib.hived_allocate_pod(self.s, req, self.result, ctypes.byref(pod),
                                                   ctypes.byref(out), ctypes.byref(msg)), msg)
        if out.info.reason:
            self.h.lib.hived_free(out.info.reason)
        return out.slot, bool(out.started_gang)

    def release_pod(self, group, pod):
        """Deletes one pod; returns True when it was the gang's last (the gang is released)."""
        gang, msg = ctypes.c_int(), ctypes.c_void_p()
        self.h.check(self.h.lib.hived_release_pod(self.s, group.encode(), pod.encode(),
                                                  ctypes.byref(gang), ctypes.byref(msg)), msg)
        return bool(gang.value)

    def schedule_timed(self, req, now, deadline):
        """A Preempting-phase Schedule whose reservation expires at `deadline`."""
        lib, msg = self.h.lib, ctypes.c_void_p()
        self.h.check(lib.hived_schedule_timed(self.s, req, PHASE_PREEMPTING, now, 1, deadline,
                                              self.result, ctypes.byref(msg)), msg)
        return lib.hived_outcome_name(lib.hived_result_outcome(self.result)).decode()

    def expire(self, now):
        out, n, msg = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
        self.h.check(self.h.lib.hived_expire_reservations(self.s, now, ctypes.byref(out),
                                                          ctypes.byref(n), ctypes.byref(msg)), msg)
        return json.loads(self.h.take(out, n.value))

    def release(self, group):
        msg = ctypes.c_void_p()
        self.h.check(self.h.lib.hived_release(self.s, group.encode(), ctypes.byref(msg)), msg)

    def json_view(self, fn):
        out, n, msg = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
        self.h.check(fn(self.s, ctypes.byref(out), ctypes.byref(n), ctypes.byref(msg)), msg)
        return self.h.take(out, n.value)


def main(argv):
    if len(argv) < 2:
        print(f"usage: {argv[0]} <libhived_c.so> [config.yaml]", file=sys.stderr)
        return 2
    hived = Hived(argv[1])
    config = argv[2] if len(argv) > 2 else "config/examples/two-racks.yaml"
    print(f"hived {hived.lib.hived_version().decode()} from Python")
    s = Scheduler(hived, config)
    req = s.request("train-1", "prod", 0, 2, 8)  # 2 pods x 8 GPUs
    outcome, reason, pods = s.schedule(req, PHASE_PREEMPTING)
    print(f"schedule train-1: {outcome} {reason}")
    if outcome != "placed":
        raise SystemExit("expected train-1 to be placed")
    for i, (node, devices) in enumerate(pods):
        print(f"  pod {i} on {node}, GPUs {devices}")
    # Kubernetes binds pod by pod: the first pod runs the gang, the second takes its slot.
    for name in ("train-1-worker-0", "train-1-worker-1"):
        slot, started = s.allocate_pod(req, name, 8)
        print(f"bound {name}: slot {slot}{' (started the gang)' if started else ''}")
    nodes = json.loads(s.json_view(hived.lib.hived_nodes_json))
    free = sum(n["freeLeafCells"] for n in nodes)
    groups = json.loads(s.json_view(hived.lib.hived_groups_json))
    print(f"allocated train-1: {free} GPUs free, groups {[g['name'] for g in groups]} "
          f"({groups[0]['state']})")
    state = s.json_view(hived.lib.hived_save_state)
    print(f"saved state: {len(state)} bytes")

    # Misuse is an error with a code and a message, never a crash.
    bad = s.request("x", "no-such-vc", 0, 1, 1)
    try:
        s.schedule(bad, PHASE_FILTERING)
        raise SystemExit("an unknown VC was accepted")
    except HivedError as e:
        print(f"unknown VC: {e}")

    # Pods are deleted one at a time; the last one releases the gang.
    print(f"deleted worker-0: gang released {s.release_pod('train-1', 'train-1-worker-0')}")
    print(f"deleted worker-1: gang released {s.release_pod('train-1', 'train-1-worker-1')}")
    try:
        s.release("train-1")
    except HivedError as e:
        print(f"second release: {e}")

    # A reservation whose bind never comes (Permit timed out) expires at its deadline.
    held = s.request("held-1", "prod", 0, 1, 8)
    print(f"schedule held-1 at t=1000, deadline 1500: {s.schedule_timed(held, 1000, 1500)}")
    if s.expire(1499):
        raise SystemExit("a reservation expired before its deadline")
    expired = s.expire(1500)
    print(f"expired at t=1500: {[(e['group'], e['state'], e['reservedAt']) for e in expired]}")
    if [e["group"] for e in expired] != ["held-1"]:
        raise SystemExit("held-1 did not expire")
    hived.lib.hived_request_destroy(held)
    msg = ctypes.c_void_p()
    hived.check(hived.lib.hived_check_invariants(s.s, ctypes.byref(msg)), msg)
    print("released train-1")
    hived.lib.hived_request_destroy(bad)
    hived.lib.hived_request_destroy(req)
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
