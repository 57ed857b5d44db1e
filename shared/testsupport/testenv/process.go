package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is a child process started for a test: it runs in its own process group, dies with the test
// binary (Pdeathsig), keeps the tail of its output for error messages, and is stopped by PID.
type Process struct {
	Name   string
	cmd    *exec.Cmd
	out    *tailBuffer
	exited chan struct{}
	err    error
}

// StartProcess starts name with args. logPath, when set, also receives the full output.
func StartProcess(name, path string, args []string, logPath string) (*Process, error) {
	return StartProcessWithEnv(name, path, args, nil, logPath)
}

// StartProcessWithEnv is StartProcess with env added to this process's environment (later entries win).
func StartProcessWithEnv(name, path string, args, env []string, logPath string) (*Process, error) {
	cmd := exec.Command(path, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out := &tailBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return nil, fmt.Errorf("creating log for %s: %w", name, err)
		}
		out.file = f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", name, path, err)
	}
	p := &Process{Name: name, cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		if out.file != nil {
			out.file.Close()
		}
		close(p.exited)
	}()
	return p, nil
}

// PID is the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Output returns the last 16 KiB the process wrote.
func (p *Process) Output() string { return p.out.String() }

// Stop sends SIGTERM to the process group, and SIGKILL if it has not exited after grace.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
		<-p.exited
	}
}

// tailBuffer keeps the last max bytes written to it (and copies everything to file when set).
type tailBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	file *os.File
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.file != nil {
		_, _ = b.file.Write(p)
	}
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
