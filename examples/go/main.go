// A cluster manager's first steps with hived from Go, through the C interface
// (include/hived/hived_c.h) and cgo: load a HiveD config, schedule a gang, bind it
// (Allocate) pod by pod, look at the views, save the state, release it pod by pod, and let
// a reservation with a deadline expire. docs/integration.md
// ("From C, Go and Python") walks through it; CI builds and runs it against the installed
// package:
//
//	PKG_CONFIG_PATH=<prefix>/lib/pkgconfig go build -o hived-go-example .
//	LD_LIBRARY_PATH=<prefix>/lib ./hived-go-example config/examples/two-racks.yaml
package main

// #cgo pkg-config: hived_c
// #include <stdlib.h>
// #include "hived/hived_c.h"
import "C"

import (
	"encoding/json"
	"fmt"
	"os"
	"unsafe"
)

// Error is a hived error: its code (absl's, e.g. "not-found") and message.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// check turns a hived_code and its message into a Go error, freeing the message.
func check(code C.hived_code, msg *C.char) error {
	if code == C.HIVED_OK {
		return nil
	}
	defer C.hived_free(unsafe.Pointer(msg))
	return &Error{Code: C.GoString(C.hived_code_name(C.int(code))), Message: C.GoString(msg)}
}

// takeString copies a string the library returned and frees it.
func takeString(s *C.char, n C.size_t) string {
	defer C.hived_free(unsafe.Pointer(s))
	return C.GoStringN(s, C.int(n))
}

// Scheduler wraps a hived_scheduler handle. Safe to share between goroutines.
type Scheduler struct{ s *C.hived_scheduler }

func NewScheduler(configPath string) (*Scheduler, error) {
	path := C.CString(configPath)
	defer C.free(unsafe.Pointer(path))
	var s *C.hived_scheduler
	var msg *C.char
	if err := check(C.hived_scheduler_create_from_file(path, &s, &msg), msg); err != nil {
		return nil, err
	}
	return &Scheduler{s}, nil
}

func (s *Scheduler) Close() { C.hived_scheduler_destroy(s.s) }

// Request wraps a hived_request: a gang of `pods` pods of `gpus` GPUs each.
type Request struct {
	r    *C.hived_request
	Name string
}

func NewRequest(name, vc string, priority, pods, gpus int32) (*Request, error) {
	cname, cvc := C.CString(name), C.CString(vc)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(cvc))
	// The member array is C memory: cgo forbids passing Go memory holding Go pointers.
	member := (*C.hived_member)(C.calloc(1, C.sizeof_hived_member))
	defer C.free(unsafe.Pointer(member))
	member.pod_number = C.int32_t(pods)
	member.leaf_cell_number = C.int32_t(gpus)
	desc := (*C.hived_request_desc)(C.calloc(1, C.sizeof_hived_request_desc))
	defer C.free(unsafe.Pointer(desc))
	desc.name, desc.vc, desc.priority = cname, cvc, C.int32_t(priority)
	desc.members, desc.member_count = member, 1
	var r *C.hived_request
	var msg *C.char
	if err := check(C.hived_request_create(desc, &r, &msg), msg); err != nil {
		return nil, err
	}
	return &Request{r, name}, nil
}

func (r *Request) Close() { C.hived_request_destroy(r.r) }

// Pod is where one pod of a placement runs.
type Pod struct {
	Node    string
	Devices []int32
}

// Result wraps a hived_result.
type Result struct{ r *C.hived_result }

func NewResult() *Result { return &Result{C.hived_result_create()} }
func (r *Result) Close() { C.hived_result_destroy(r.r) }
func (r *Result) Outcome() string {
	return C.GoString(C.hived_outcome_name(C.int(C.hived_result_outcome(r.r))))
}
func (r *Result) Reason() string { return C.GoString(C.hived_result_reason(r.r)) }
func (r *Result) Pods() []Pod {
	n := int(C.hived_result_pod_count(r.r))
	pods := make([]Pod, n)
	for i := 0; i < n; i++ {
		var count C.size_t
		indices := C.hived_result_pod_leaf_cell_indices(r.r, C.size_t(i), &count)
		devices := make([]int32, int(count))
		for k, v := range unsafe.Slice(indices, int(count)) {
			devices[k] = int32(v)
		}
		pods[i] = Pod{C.GoString(C.hived_result_pod_node(r.r, C.size_t(i))), devices}
	}
	return pods
}

// Schedule asks for a placement; Phase preempting reserves a kPlaced one.
func (s *Scheduler) Schedule(req *Request, preempting bool, into *Result) error {
	phase := C.int(C.HIVED_PHASE_FILTERING)
	if preempting {
		phase = C.HIVED_PHASE_PREEMPTING
	}
	var msg *C.char
	return check(C.hived_schedule(s.s, req.r, phase, into.r, &msg), msg)
}

// Allocate records that the gang runs where Schedule placed it.
func (s *Scheduler) Allocate(req *Request, placed *Result) error {
	var msg *C.char
	return check(C.hived_allocate(s.s, req.r, placed.r, nil, &msg), msg)
}

func (s *Scheduler) Release(group string) error {
	g := C.CString(group)
	defer C.free(unsafe.Pointer(g))
	var msg *C.char
	return check(C.hived_release(s.s, g, &msg), msg)
}

// AllocatePod binds one pod of the scheduled gang (the first pod runs the whole gang);
// it returns the pod's slot and whether this call started the gang.
func (s *Scheduler) AllocatePod(req *Request, placed *Result, pod string, gpus int32) (int, bool, error) {
	var desc C.hived_pod_desc
	desc.name = C.CString(pod)
	defer C.free(unsafe.Pointer(desc.name))
	desc.leaf_cell_number = C.int32_t(gpus)
	desc.first_leaf_index = -1
	var out C.hived_pod_allocation
	var msg *C.char
	if err := check(C.hived_allocate_pod(s.s, req.r, placed.r, &desc, &out, &msg), msg); err != nil {
		return 0, false, err
	}
	C.hived_free(unsafe.Pointer(out.info.reason))
	return int(out.slot), out.started_gang != 0, nil
}

// ReleasePod deletes one pod; true when it was the gang's last (the gang is released).
func (s *Scheduler) ReleasePod(group, pod string) (bool, error) {
	g, p := C.CString(group), C.CString(pod)
	defer C.free(unsafe.Pointer(g))
	defer C.free(unsafe.Pointer(p))
	var gang C.int
	var msg *C.char
	err := check(C.hived_release_pod(s.s, g, p, &gang, &msg), msg)
	return gang != 0, err
}

// ScheduleUntil reserves in the Preempting phase at time `now` until `deadline`.
func (s *Scheduler) ScheduleUntil(req *Request, now, deadline int64, into *Result) error {
	var msg *C.char
	return check(C.hived_schedule_timed(s.s, req.r, C.HIVED_PHASE_PREEMPTING, C.int64_t(now), 1,
		C.int64_t(deadline), into.r, &msg), msg)
}

// Expired is one entry of hived_expire_reservations.
type Expired struct {
	Group      string `json:"group"`
	State      string `json:"state"`
	ReservedAt int64  `json:"reservedAt"`
	Deadline   int64  `json:"deadline"`
}

// ExpireReservations gives up the reservations whose deadline is at or before `now`.
func (s *Scheduler) ExpireReservations(now int64) ([]Expired, error) {
	var out, msg *C.char
	var n C.size_t
	if err := check(C.hived_expire_reservations(s.s, C.int64_t(now), &out, &n, &msg), msg); err != nil {
		return nil, err
	}
	var expired []Expired
	err := json.Unmarshal([]byte(takeString(out, n)), &expired)
	return expired, err
}

// NodeStatus is one entry of hived_nodes_json.
type NodeStatus struct {
	Name           string `json:"name"`
	LeafCellType   string `json:"leafCellType"`
	TotalLeafCells int    `json:"totalLeafCells"`
	FreeLeafCells  int    `json:"freeLeafCells"`
	Healthy        bool   `json:"healthy"`
}

func (s *Scheduler) Nodes() ([]NodeStatus, error) {
	var out, msg *C.char
	var n C.size_t
	if err := check(C.hived_nodes_json(s.s, &out, &n, &msg), msg); err != nil {
		return nil, err
	}
	var nodes []NodeStatus
	err := json.Unmarshal([]byte(takeString(out, n)), &nodes)
	return nodes, err
}

func (s *Scheduler) SaveState() (string, error) {
	var out, msg *C.char
	var n C.size_t
	if err := check(C.hived_save_state(s.s, &out, &n, &msg), msg); err != nil {
		return "", err
	}
	return takeString(out, n), nil
}

func run(configPath string) error {
	fmt.Printf("hived %s from Go\n", C.GoString(C.hived_version()))
	s, err := NewScheduler(configPath)
	if err != nil {
		return err
	}
	defer s.Close()

	req, err := NewRequest("train-1", "prod", 0, 2, 8) // 2 pods x 8 GPUs
	if err != nil {
		return err
	}
	defer req.Close()
	result := NewResult()
	defer result.Close()
	if err := s.Schedule(req, true, result); err != nil {
		return err
	}
	fmt.Printf("schedule %s: %s %s\n", req.Name, result.Outcome(), result.Reason())
	if result.Outcome() != "placed" {
		return fmt.Errorf("expected %s to be placed", req.Name)
	}
	for i, pod := range result.Pods() {
		fmt.Printf("  pod %d on %s, GPUs %v\n", i, pod.Node, pod.Devices)
	}
	// Kubernetes binds pod by pod: the first pod runs the gang, the second takes its slot.
	for _, pod := range []string{"train-1-worker-0", "train-1-worker-1"} {
		slot, started, err := s.AllocatePod(req, result, pod, 8)
		if err != nil {
			return err
		}
		fmt.Printf("bound %s: slot %d (started the gang: %v)\n", pod, slot, started)
	}
	nodes, err := s.Nodes()
	if err != nil {
		return err
	}
	free := 0
	for _, n := range nodes {
		free += n.FreeLeafCells
	}
	fmt.Printf("allocated %s: %d of the cluster's GPUs are free\n", req.Name, free)
	state, err := s.SaveState()
	if err != nil {
		return err
	}
	fmt.Printf("saved state: %d bytes\n", len(state))

	// Misuse is an error with a code and a message, never a crash.
	bad, err := NewRequest("x", "no-such-vc", 0, 1, 1)
	if err != nil {
		return err
	}
	defer bad.Close()
	if err := s.Schedule(bad, false, result); err != nil {
		fmt.Printf("unknown VC: %v\n", err)
	} else {
		return fmt.Errorf("an unknown VC was accepted")
	}

	// Pods are deleted one at a time; the last one releases the gang.
	for _, pod := range []string{"train-1-worker-0", "train-1-worker-1"} {
		gang, err := s.ReleasePod(req.Name, pod)
		if err != nil {
			return err
		}
		fmt.Printf("deleted %s: gang released %v\n", pod, gang)
	}
	if err := s.Release(req.Name); err != nil {
		fmt.Printf("second release: %v\n", err)
	}

	// A reservation whose bind never comes (Permit timed out) expires at its deadline.
	held, err := NewRequest("held-1", "prod", 0, 1, 8)
	if err != nil {
		return err
	}
	defer held.Close()
	if err := s.ScheduleUntil(held, 1000, 1500, result); err != nil {
		return err
	}
	fmt.Printf("schedule held-1 at t=1000, deadline 1500: %s\n", result.Outcome())
	if early, err := s.ExpireReservations(1499); err != nil || len(early) != 0 {
		return fmt.Errorf("a reservation expired before its deadline (%v)", err)
	}
	expired, err := s.ExpireReservations(1500)
	if err != nil {
		return err
	}
	if len(expired) != 1 || expired[0].Group != "held-1" {
		return fmt.Errorf("held-1 did not expire: %v", expired)
	}
	fmt.Printf("expired at t=1500: %s (%s since t=%d)\n", expired[0].Group, expired[0].State,
		expired[0].ReservedAt)
	var msg *C.char
	if err := check(C.hived_check_invariants(s.s, &msg), msg); err != nil {
		return err
	}
	fmt.Printf("released %s\n", req.Name)
	return nil
}

func main() {
	config := "config/examples/two-racks.yaml"
	if len(os.Args) > 1 {
		config = os.Args[1]
	}
	if err := run(config); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
