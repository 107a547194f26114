package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"
)

// containerRuntime is the simulated nodes' container runtime: a container whose spec has a
// command runs as a local process (command followed by args, the container's literal env
// values, in a directory of its own) from the time kwok reports its pod Running until the pod is
// deleted. Its stdout and stderr go to a CRI-format log file (what `kubectl logs` reads) and to
// the clients attached to it; its stdin is a pipe when the spec asks for stdin. A container
// without a command runs nothing: its logs are empty and attaching to it is an error.
//
// The pod's status stays kwok's: a process that exits is not restarted and does not make the
// container Terminated.
type containerRuntime struct {
	dir string // <data-dir>/kubelet

	mu   sync.Mutex
	pods map[string]*podProcesses // by namespace/name
}

// podProcesses are the processes of one pod (one UID: a pod re-created under the same name is
// another pod).
type podProcesses struct {
	uid        string
	containers map[string]*containerProcess
}

// containerProcess is one container's process and what is attached to it.
type containerProcess struct {
	logPath string
	stdin   io.WriteCloser // nil unless the container's spec has stdin: true
	once    bool           // stdinOnce: the first attached client's end of input closes stdin
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited and its output is written

	mu       sync.Mutex
	attached map[*attachment]struct{}
	exited   bool
}

// attachment is one attached client's output.
type attachment struct {
	stdout, stderr io.Writer
	failed         chan struct{} // closed when writing to the client failed
	failOnce       sync.Once
}

func newContainerRuntime(dir string) *containerRuntime {
	return &containerRuntime{dir: dir, pods: map[string]*podProcesses{}}
}

// run follows the pods bound to the simulated nodes until ctx ends, starting and stopping their
// processes, and stops every process at the end.
func (r *containerRuntime) run(ctx context.Context, cs kubernetes.Interface) {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }))
	informer := factory.Core().V1().Pods().Informer()
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.sync(obj) },
		UpdateFunc: func(_, obj any) { r.sync(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				r.stopPod(pod.Namespace+"/"+pod.Name, string(pod.UID))
			}
		},
	})
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	r.mu.Lock()
	pods := r.pods
	r.pods = map[string]*podProcesses{}
	r.mu.Unlock()
	for _, p := range pods {
		for _, c := range p.containers {
			c.kill()
		}
	}
}

// sync starts the processes of a Running pod on a simulated node, or stops them once the pod is
// being deleted.
func (r *containerRuntime) sync(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !strings.HasPrefix(pod.Spec.NodeName, nodeNamePrefix) {
		return
	}
	key := pod.Namespace + "/" + pod.Name
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		r.stopPod(key, string(pod.UID))
		return
	}
	if pod.Status.Phase != corev1.PodRunning {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	existing := r.pods[key]
	if existing != nil && existing.uid == string(pod.UID) {
		return
	}
	if existing != nil {
		go existing.killAll()
	}
	p := &podProcesses{uid: string(pod.UID), containers: map[string]*containerProcess{}}
	r.pods[key] = p
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		proc, err := r.start(pod, c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: container %s of pod %s: %v\n", c.Name, key, err)
			continue
		}
		p.containers[c.Name] = proc
	}
}

// stopPod kills the processes of the pod with this key and UID.
func (r *containerRuntime) stopPod(key, uid string) {
	r.mu.Lock()
	p := r.pods[key]
	if p == nil || p.uid != uid {
		r.mu.Unlock()
		return
	}
	delete(r.pods, key)
	r.mu.Unlock()
	go func() {
		p.killAll()
		_ = os.RemoveAll(r.podDir(uid))
	}()
}

func (p *podProcesses) killAll() {
	for _, c := range p.containers {
		c.kill()
	}
}

// podDir is where a pod's containers keep their log files and working directories.
func (r *containerRuntime) podDir(uid string) string {
	return filepath.Join(r.dir, "pods", uid)
}

// workDir is the directory a container's processes (its command, and exec) start in.
func (r *containerRuntime) workDir(uid, container string) (string, error) {
	dir := filepath.Join(r.podDir(uid), container)
	return dir, os.MkdirAll(dir, 0o700)
}

// env is what a process of the container sees: PATH and HOME, then the container's literal
// env values (values from fields, secrets or config maps are not resolved).
func containerEnv(pod *corev1.Pod, c *corev1.Container, home string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "HOSTNAME=" + pod.Name}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}

// start starts a container's process; a container without a command gets an empty log file.
func (r *containerRuntime) start(pod *corev1.Pod, c *corev1.Container) (*containerProcess, error) {
	dir, err := r.workDir(string(pod.UID), c.Name)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(r.podDir(string(pod.UID)), c.Name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	proc := &containerProcess{logPath: logPath, done: make(chan struct{}), attached: map[*attachment]struct{}{}, once: c.StdinOnce}
	if len(c.Command) == 0 {
		_ = logFile.Close()
		proc.exited = true
		close(proc.done)
		return proc, nil
	}
	argv := append(append([]string{}, c.Command...), c.Args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = containerEnv(pod, c, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = logFile.Close()
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		_ = logFile.Close()
		return nil, err
	}
	if c.Stdin {
		if proc.stdin, err = cmd.StdinPipe(); err != nil {
			_ = logFile.Close()
			return nil, err
		}
	}
	proc.cmd = cmd
	log := &criLogWriter{file: logFile}
	if err := cmd.Start(); err != nil {
		// As a runtime would, say so in the container's log.
		log.write(runtimeapi.Stderr, []byte(err.Error()+"\n"))
		log.flush()
		_ = logFile.Close()
		proc.exited = true
		close(proc.done)
		return proc, nil
	}
	var copies sync.WaitGroup
	copies.Add(2)
	go proc.pump(stdout, runtimeapi.Stdout, log, &copies)
	go proc.pump(stderr, runtimeapi.Stderr, log, &copies)
	go func() {
		copies.Wait()
		_ = cmd.Wait()
		log.flush()
		_ = logFile.Close()
		proc.mu.Lock()
		proc.exited = true
		proc.mu.Unlock()
		close(proc.done)
	}()
	return proc, nil
}

// pump copies one output stream of the process to the log file and to the attached clients.
func (p *containerProcess) pump(from io.Reader, stream runtimeapi.LogStreamType, log *criLogWriter, wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, 32*1024)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			log.write(stream, chunk)
			p.mu.Lock()
			for a := range p.attached {
				w := a.stdout
				if stream == runtimeapi.Stderr {
					w = a.stderr
				}
				if w == nil {
					continue
				}
				if _, werr := w.Write(chunk); werr != nil {
					a.failOnce.Do(func() { close(a.failed) })
				}
			}
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// kill ends the process and its children (its process group), and waits for it.
func (p *containerProcess) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// running reports whether the process still runs.
func (p *containerProcess) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// attach connects a client to the running process until it exits or the client goes away.
func (p *containerProcess) attach(ctx context.Context, in io.Reader, stdout, stderr io.Writer) error {
	if !p.running() {
		return errors.New("the container is not running (only a container whose spec has a command runs, until it exits)")
	}
	a := &attachment{stdout: stdout, stderr: stderr, failed: make(chan struct{})}
	p.mu.Lock()
	p.attached[a] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.attached, a)
		p.mu.Unlock()
	}()
	inDone := make(chan struct{})
	if in != nil && p.stdin != nil {
		go func() {
			defer close(inDone)
			_, _ = io.Copy(p.stdin, in)
			if p.once {
				_ = p.stdin.Close()
			}
		}()
	}
	select {
	case <-p.done:
	case <-a.failed:
	case <-ctx.Done():
	}
	return nil
}

// criLogWriter writes a container's output in the CRI log format the kubelet reads:
// "<RFC3339Nano time> <stream> <F|P> <text>\n" per line; a partial line is held until its end
// (or the end of the process), and a line longer than 16 KiB is split into P records.
type criLogWriter struct {
	mu      sync.Mutex
	file    *os.File
	pending map[runtimeapi.LogStreamType][]byte
}

const maxLogLine = 16 * 1024

func (w *criLogWriter) write(stream runtimeapi.LogStreamType, chunk []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[runtimeapi.LogStreamType][]byte{}
	}
	data := append(w.pending[stream], chunk...)
	var out bytes.Buffer
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		w.record(&out, stream, runtimeapi.LogTagFull, data[:i])
		data = data[i+1:]
	}
	for len(data) > maxLogLine {
		w.record(&out, stream, runtimeapi.LogTagPartial, data[:maxLogLine])
		data = data[maxLogLine:]
	}
	w.pending[stream] = append([]byte(nil), data...)
	_, _ = w.file.Write(out.Bytes())
}

// flush writes what is left of unterminated lines, as full lines.
func (w *criLogWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out bytes.Buffer
	for stream, data := range w.pending {
		if len(data) > 0 {
			w.record(&out, stream, runtimeapi.LogTagFull, data)
		}
	}
	w.pending = nil
	_, _ = w.file.Write(out.Bytes())
}

func (w *criLogWriter) record(out *bytes.Buffer, stream runtimeapi.LogStreamType, tag runtimeapi.LogTag, line []byte) {
	out.WriteString(time.Now().UTC().Format(time.RFC3339Nano))
	out.WriteByte(' ')
	out.WriteString(string(stream))
	out.WriteByte(' ')
	out.WriteString(string(tag))
	out.WriteByte(' ')
	out.Write(line)
	out.WriteByte('\n')
}

// lookup finds a container of a pod that runs on a simulated node (waiting as waitPod does).
func (r *containerRuntime) lookup(ctx context.Context, namespace, pod, container string) (*containerProcess, string, error) {
	p := r.waitPod(ctx, namespace, pod)
	if p == nil {
		return nil, "", fmt.Errorf("pod %s/%s is not running on a simulated node", namespace, pod)
	}
	c := p.containers[container]
	if c == nil {
		return nil, "", fmt.Errorf("container %q not found in pod %s/%s", container, namespace, pod)
	}
	return c, p.uid, nil
}

// waitPod returns the processes of a pod that runs on a simulated node, or nil. The runtime
// learns that a pod runs from its informer, a moment after a client can see it Running: a pod
// not known yet is waited for, up to lookupWait.
func (r *containerRuntime) waitPod(ctx context.Context, namespace, pod string) *podProcesses {
	deadline := time.Now().Add(lookupWait)
	for {
		r.mu.Lock()
		p := r.pods[namespace+"/"+pod]
		r.mu.Unlock()
		if p != nil || time.Now().After(deadline) {
			return p
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// How long lookup waits for the informer to report a pod Running.
const lookupWait = 5 * time.Second

// exitError turns a finished command's error into what the streaming handlers report: an exit
// code (a process killed by a signal exits 128+signal, as in a shell) or the error itself.
func exitError(err error) error {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return err
	}
	code := exitErr.ExitCode()
	if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		code = 128 + int(status.Signal())
	}
	return utilexec.CodeExitError{Err: err, Code: code}
}
