package scale_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cpuSample is the CPU time (user + system, in clock ticks of 10ms) used so far by the test
// process (the control plane, and the test's clients and watches) and by each server process
// it started, by name: "etcd", "kube-apiserver <etcd prefix>", and with -scale.process
// "fedkit-controller-manager".
type cpuSample map[string]int64

// sampleCPU reads /proc; on a system without it the sample is empty.
func sampleCPU() cpuSample {
	out := cpuSample{}
	self := os.Getpid()
	// With -scale.process the control plane is a child, counted under its name.
	if *processFlag {
		out["test"] = ticks(self)
	} else {
		out["control plane + test"] = ticks(self)
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || ppid(pid) != self {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(cmd, "\x00")), "\x00")
		name := filepath.Base(args[0])
		for _, a := range args {
			if p, ok := strings.CutPrefix(a, "--etcd-prefix=/testenv/"); ok {
				name += " " + p
			}
		}
		out[name] += ticks(pid)
	}
	return out
}

// stat returns the fields of /proc/pid/stat after the command name.
func stat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

func ppid(pid int) int {
	f := stat(pid)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// ticks is utime + stime (fields 14 and 15 of stat, 12 and 13 after the name).
func ticks(pid int) int64 {
	f := stat(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// cpuPerObject is the CPU milliseconds per object each process used between two samples.
func cpuPerObject(before, after cpuSample, objects int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = float64(v-before[k]) * 10 / float64(objects)
	}
	return out
}
