package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// process is one child process whose output goes to a log file.
type process struct {
	name    string // for messages: "etcd", "apiserver host"
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited and been reaped
	waitErr error         // set before done is closed
}

// startProcess starts binary with args, its stdout and stderr written to logPath.
func startProcess(name, binary string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("testenv: %s: opening the log file: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("testenv: %s: starting %s: %w", name, binary, err)
	}
	// The child has its own copy of the descriptor; ours is no longer needed.
	_ = logFile.Close()
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits until the process is reaped. The processes hold no
// state worth a graceful shutdown (their data directory is deleted next), and a
// graceful apiserver shutdown takes seconds. Killing an exited process is a no-op.
func (p *process) kill() error {
	if !p.exited() {
		if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("testenv: %s: killing pid %d: %w", p.name, p.pid(), err)
		}
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("testenv: %s: pid %d did not exit 30s after SIGKILL", p.name, p.pid())
	}
}

// tail returns about the last n lines of the process's log, for error messages.
func (p *process) tail(n int) string {
	const maxBytes = 16 << 10
	f, err := os.Open(p.logPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxBytes {
		_, _ = f.Seek(fi.Size()-maxBytes, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// failure builds the error for a process that did not become ready: why, its exit
// status if it has exited, and the tail of its log.
func (p *process) failure(cause error) error {
	state := "still running"
	if p.exited() {
		state = fmt.Sprintf("exited: %v", p.waitErr)
	}
	return fmt.Errorf("testenv: %s (pid %d, %s) not ready: %w\n--- last lines of its log (%s) ---\n%s",
		p.name, p.pid(), state, cause, filepath.Base(p.logPath), p.tail(30))
}

// addressInUse reports whether the process exited because a port was taken between
// freePorts closing its listener and the process binding it.
func (p *process) addressInUse() bool {
	return p.exited() && strings.Contains(p.tail(30), "address already in use")
}

// freePorts returns n distinct free TCP ports on 127.0.0.1. It holds all listeners
// open until it has them all, so the ports differ from one another; another process
// can still take one before our child binds it, which callers handle by retrying.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("testenv: finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitReady polls probe every 100-500 ms until it returns nil, the process exits,
// timeout passes or ctx is done. On failure the error carries the log's tail.
func waitReady(ctx context.Context, p *process, timeout time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	interval := 100 * time.Millisecond
	var last error
	for {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		last = probe(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.failure(fmt.Errorf("process exited; last probe: %w", last))
		case <-ctx.Done():
			return p.failure(fmt.Errorf("%w; last probe: %w", ctx.Err(), last))
		case <-time.After(interval):
		}
		interval = min(interval*3/2, 500*time.Millisecond)
	}
}

// httpProbe returns a probe that GETs url with client (and token, if not empty) and
// succeeds on 200 OK.
func httpProbe(client func() (*http.Client, error), url, token string) func(context.Context) error {
	return func(ctx context.Context) error {
		c, err := client()
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, failedChecks(string(body)))
		}
		return nil
	}
}

// failedChecks shortens a /readyz body to its failed checks ("[-]name failed: ...").
func failedChecks(body string) string {
	var failed []string
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimSpace(line))
		}
	}
	if len(failed) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(failed, ", ")
}
