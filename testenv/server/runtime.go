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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	cpty "github.com/creack/pty"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// containerRuntime is the simulated nodes' container runtime: a container whose spec has a
// command runs as a local process (command followed by args, the container's literal env
// values, in a directory of its own) from the time kwok reports its pod Running until the pod is
// deleted. Its stdout and stderr go to a CRI-format log file (what `kubectl logs` reads) and to
// the clients attached to it; its stdin is a pipe when the spec asks for stdin, and with
// `tty: true` all three are a pseudo-terminal, which attached clients can resize. A container
// without a command runs nothing: its logs are empty and attaching to it is an error.
//
// A process that exits is handled as the kubelet does, by the pod's restartPolicy (see
// container.supervise): restarted (Always, or OnFailure after a non-zero exit) with the
// kubelet's crash-loop back-off, its restartCount and lastState in the pod's status, and the
// previous run's log kept for `previous=true`; or left Terminated (Never, OnFailure after exit
// code 0). The pod's phase stays kwok's.
type containerRuntime struct {
	dir    string  // <data-dir>/kubelet
	reaper *reaper // ends the processes should this server be killed
	token  string  // this server's own, in the tags of its processes (see processTagEnv)

	// Set by run: the context and client the status updates use.
	ctx context.Context
	cs  kubernetes.Interface

	mu   sync.Mutex
	pods map[string]*podProcesses // by namespace/name
}

// podProcesses are the containers of one pod (one UID: a pod re-created under the same name is
// another pod).
type podProcesses struct {
	uid        string
	containers map[string]*container
}

// container is one container of a pod: its current run (process), the log of its previous
// run, and how often it was restarted.
type container struct {
	r                    *containerRuntime
	namespace, pod, name string
	uid                  string
	policy               corev1.RestartPolicy
	spec                 *corev1.Container // a copy
	env                  []string
	stop                 chan struct{} // closed when the pod goes away: no more restarts
	stopOnce             sync.Once

	mu          sync.Mutex
	current     *containerProcess
	previousLog string // "" until the first restart
	restarts    int32
	execs       map[int]struct{} // the exec'd commands running in it, by pid
}

// containerProcess is one run of a container's command and what is attached to it.
type containerProcess struct {
	logPath string
	stdin   io.WriteCloser // nil unless the container's spec has stdin: true
	once    bool           // stdinOnce: the first attached client's end of input closes stdin
	tty     *os.File       // the pseudo-terminal's controlling side with tty: true, else nil
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited and its output is written
	started time.Time

	mu       sync.Mutex
	attached map[*attachment]struct{}
	exited   bool
	waitErr  error     // cmd.Wait's result, or the start error; set before done is closed
	finished time.Time // set before done is closed
	noRun    bool      // no command: nothing ran, nothing to restart
}

// attachment is one attached client's output.
type attachment struct {
	stdout, stderr io.Writer
	failed         chan struct{} // closed when writing to the client failed
	failOnce       sync.Once
}

// newContainerRuntime makes the runtime and starts its reaper.
func newContainerRuntime(dir string) *containerRuntime {
	token := randomToken()[:16]
	return &containerRuntime{dir: dir, reaper: startReaper(token), token: token, pods: map[string]*podProcesses{}, ctx: context.Background()}
}

// run follows the pods bound to the simulated nodes until ctx ends, starting and stopping their
// processes, and stops every process at the end.
func (r *containerRuntime) run(ctx context.Context, cs kubernetes.Interface) {
	r.mu.Lock()
	r.ctx, r.cs = ctx, cs
	r.mu.Unlock()
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
		p.killAll()
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
	p := &podProcesses{uid: string(pod.UID), containers: map[string]*container{}}
	r.pods[key] = p
	for i := range pod.Spec.Containers {
		spec := pod.Spec.Containers[i].DeepCopy()
		c := &container{
			r: r, namespace: pod.Namespace, pod: pod.Name, name: spec.Name, uid: string(pod.UID),
			policy: pod.Spec.RestartPolicy, spec: spec, stop: make(chan struct{}),
		}
		dir, err := r.workDir(c.uid, c.name)
		if err == nil {
			c.env = append(containerEnv(pod, spec, dir), c.tag())
			c.current, err = r.start(c, dir, 0)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: container %s of pod %s: %v\n", c.name, key, err)
			continue
		}
		p.containers[c.name] = c
		go c.supervise()
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

// workDir is the directory a container's processes (its command, and exec) start in. It is
// kept across the container's restarts.
func (r *containerRuntime) workDir(uid, container string) (string, error) {
	dir := filepath.Join(r.podDir(uid), container)
	return dir, os.MkdirAll(dir, 0o700)
}

// logPath is the log file of a container's run after `restarts` restarts: the first run's is
// <container>.log (as before restarts were simulated), the next ones <container>.<n>.log.
func (r *containerRuntime) logPath(uid, container string, restarts int32) string {
	if restarts == 0 {
		return filepath.Join(r.podDir(uid), container+".log")
	}
	return filepath.Join(r.podDir(uid), fmt.Sprintf("%s.%d.log", container, restarts))
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

// start starts a run of a container's command, logging to the log file of its restart count;
// a container without a command gets an empty log file and no process.
func (r *containerRuntime) start(c *container, dir string, restarts int32) (*containerProcess, error) {
	logPath := r.logPath(c.uid, c.name, restarts)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	proc := &containerProcess{
		logPath: logPath, done: make(chan struct{}), attached: map[*attachment]struct{}{},
		once: c.spec.StdinOnce, started: time.Now(),
	}
	if len(c.spec.Command) == 0 {
		_ = logFile.Close()
		proc.noRun = true
		proc.end(nil)
		return proc, nil
	}
	argv := append(append([]string{}, c.spec.Command...), c.spec.Args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = c.env
	proc.cmd = cmd
	log := &criLogWriter{file: logFile}
	failed := func(err error) (*containerProcess, error) {
		// As a runtime would, say so in the container's log; it counts as an exit (a
		// runtime's StartError, exit code 128), so the restart policy applies.
		log.write(runtimeapi.Stderr, []byte(err.Error()+"\n"))
		log.flush()
		_ = logFile.Close()
		proc.end(startError{err})
		return proc, nil
	}
	var copies sync.WaitGroup
	if c.spec.TTY {
		// One terminal for input and output, as a runtime gives a tty container; it is a
		// session leader, so killing its process group kills what it started.
		tty, err := cpty.Start(cmd)
		if err != nil {
			return failed(err)
		}
		r.reaper.add(cmd.Process.Pid)
		proc.tty = tty
		if c.spec.Stdin {
			proc.stdin = tty
		}
		copies.Add(1)
		go proc.pump(tty, runtimeapi.Stdout, log, &copies)
		go func() {
			waitErr := cmd.Wait()
			// The container ends with its main process: so do the processes in it.
			c.killRest(cmd.Process.Pid)
			// The output ends (EIO) once every holder of the terminal is gone.
			copies.Wait()
			_ = tty.Close()
			log.flush()
			_ = logFile.Close()
			proc.end(waitErr)
		}()
		return proc, nil
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Pipes of our own rather than cmd's: cmd.Wait then returns when the main process exits,
	// not when every process holding its output has (`sh -c 'sleep 3600 & exit 3'` exits at
	// once, as its container does; its `sleep` holds the output on).
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		_ = logFile.Close()
		return nil, err
	}
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		_ = logFile.Close()
		_, _ = stdout.Close(), stdoutW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	closeOutput := func() {
		_, _, _, _ = stdout.Close(), stdoutW.Close(), stderr.Close(), stderrW.Close()
	}
	if c.spec.Stdin {
		if proc.stdin, err = cmd.StdinPipe(); err != nil {
			_ = logFile.Close()
			closeOutput()
			return nil, err
		}
	}
	if err := cmd.Start(); err != nil {
		closeOutput()
		return failed(err)
	}
	r.reaper.add(cmd.Process.Pid)
	// The process has its own copies of the write ends.
	_, _ = stdoutW.Close(), stderrW.Close()
	copies.Add(2)
	go proc.pump(stdout, runtimeapi.Stdout, log, &copies)
	go proc.pump(stderr, runtimeapi.Stderr, log, &copies)
	go func() {
		waitErr := cmd.Wait()
		// The container ends with its main process: so do the processes in it, and with them
		// the last writers of its output.
		c.killRest(cmd.Process.Pid)
		copies.Wait()
		_, _ = stdout.Close(), stderr.Close()
		log.flush()
		_ = logFile.Close()
		proc.end(waitErr)
	}()
	return proc, nil
}

// startError is a command that could not be started.
type startError struct{ err error }

func (e startError) Error() string { return e.err.Error() }

// end records the end of the run and closes done.
func (p *containerProcess) end(waitErr error) {
	p.mu.Lock()
	p.exited = true
	p.waitErr = waitErr
	p.finished = time.Now()
	p.mu.Unlock()
	close(p.done)
}

// exitCode is the run's exit code (after done): 128+signal for a killed process, as shells
// report it, and 128 for a command that could not be started, as container runtimes report a
// StartError.
func (p *containerProcess) exitCode() (int32, string) {
	p.mu.Lock()
	err := p.waitErr
	p.mu.Unlock()
	var start startError
	switch {
	case err == nil:
		return 0, "Completed"
	case errors.As(err, &start):
		return 128, "StartError"
	}
	var coded utilexec.CodeExitError
	if errors.As(exitError(err), &coded) {
		return int32(coded.Code), "Error"
	}
	return 1, "Error"
}

// The kubelet's crash-loop back-off: the first restart is immediate, the next ones wait 10 s,
// doubling up to 5 minutes; a run that lasted longer than backOffReset starts it over.
const (
	backOffInitial = 10 * time.Second
	backOffMax     = 5 * time.Minute
	backOffReset   = 10 * time.Minute
)

// supervise waits for each run of the container to end and applies the pod's restartPolicy, as
// the kubelet does, reporting it in the pod's status: restarted (Always, or OnFailure after a
// non-zero exit), after the crash-loop back-off, with restartCount and lastState; or Terminated.
// It returns when the pod goes away or the container is not restarted.
func (c *container) supervise() {
	var delay time.Duration
	for {
		c.mu.Lock()
		proc := c.current
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		case <-proc.done:
		}
		if proc.noRun {
			return
		}
		code, reason := proc.exitCode()
		proc.mu.Lock()
		terminated := &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason,
			StartedAt: metav1.NewTime(proc.started), FinishedAt: metav1.NewTime(proc.finished),
		}
		ran := proc.finished.Sub(proc.started)
		proc.mu.Unlock()
		restart := c.policy == corev1.RestartPolicyAlways || c.policy == "" ||
			(c.policy == corev1.RestartPolicyOnFailure && code != 0)
		if !restart {
			c.report(func(s *corev1.ContainerStatus) {
				s.State = corev1.ContainerState{Terminated: terminated}
				s.Ready, s.Started = false, ptr(false)
			})
			return
		}
		if ran > backOffReset {
			delay = 0
		}
		if delay > 0 {
			message := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", delay, c.name, c.pod, c.namespace, c.uid)
			c.report(func(s *corev1.ContainerStatus) {
				s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: message}}
				s.LastTerminationState = corev1.ContainerState{Terminated: terminated}
				s.Ready, s.Started = false, ptr(false)
			})
			select {
			case <-c.stop:
				return
			case <-time.After(delay):
			}
		}
		delay = min(max(2*delay, backOffInitial), backOffMax)
		if !c.restart(proc) {
			return
		}
		c.mu.Lock()
		restarts, started := c.restarts, c.current.started
		c.mu.Unlock()
		c.report(func(s *corev1.ContainerStatus) {
			s.RestartCount = restarts
			s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}
			s.LastTerminationState = corev1.ContainerState{Terminated: terminated}
			s.Ready, s.Started = true, ptr(true)
		})
	}
}

// restart starts the next run of the container: the ended run's log becomes the previous log
// (the one before is deleted, as the kubelet keeps one dead container's log per container).
func (c *container) restart(ended *containerProcess) bool {
	dir, err := c.r.workDir(c.uid, c.name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: restarting container %s of pod %s/%s: %v\n", c.name, c.namespace, c.pod, err)
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.stop:
		return false
	default:
	}
	next, err := c.r.start(c, dir, c.restarts+1)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: restarting container %s of pod %s/%s: %v\n", c.name, c.namespace, c.pod, err)
		return false
	}
	if c.previousLog != "" {
		_ = os.Remove(c.previousLog)
	}
	c.previousLog = ended.logPath
	c.restarts++
	c.current = next
	return true
}

// report changes the container's status in its pod (the pod's Ready and ContainersReady
// conditions follow the containers' readiness), retrying on conflicts. A pod that is gone or
// being deleted is left alone.
func (c *container) report(change func(*corev1.ContainerStatus)) {
	c.r.mu.Lock()
	ctx, cs := c.r.ctx, c.r.cs
	c.r.mu.Unlock()
	if cs == nil {
		return
	}
	pods := cs.CoreV1().Pods(c.namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, c.pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(pod.UID) != c.uid || pod.DeletionTimestamp != nil {
			return nil
		}
		found := false
		for i := range pod.Status.ContainerStatuses {
			if pod.Status.ContainerStatuses[i].Name == c.name {
				change(&pod.Status.ContainerStatuses[i])
				found = true
			}
		}
		if !found {
			return nil
		}
		setReadyConditions(pod)
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "testenv: status of container %s of pod %s/%s: %v\n", c.name, c.namespace, c.pod, err)
	}
}

// setReadyConditions sets the pod's Ready and ContainersReady conditions to whether all its
// containers are ready, as the kubelet's status manager does.
func setReadyConditions(pod *corev1.Pod) {
	ready := corev1.ConditionTrue
	for _, s := range pod.Status.ContainerStatuses {
		if !s.Ready {
			ready = corev1.ConditionFalse
		}
	}
	for i := range pod.Status.Conditions {
		cond := &pod.Status.Conditions[i]
		if (cond.Type == corev1.PodReady || cond.Type == corev1.ContainersReady) && cond.Status != ready {
			cond.Status = ready
			cond.LastTransitionTime = metav1.Now()
		}
	}
}

func ptr[T any](v T) *T { return &v }

// kill stops the container's restarts and ends its current run and the commands exec'd in
// it, as a runtime's stop of a container ends every process in it: their process groups, and
// then every process tagged as the container's, which finds what an exec'd command left
// running after it exited (its group is no longer tracked) and what left its group (setsid).
func (c *container) kill() {
	c.stopOnce.Do(func() { close(c.stop) })
	c.mu.Lock()
	proc := c.current
	for pid := range c.execs {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	c.mu.Unlock()
	proc.kill()
	killTagged(c.tag())
}

// killRest ends what is left of a run of the container once its main process (the leader of
// group pgid) has exited and was reaped, as a container runtime ends every process of a
// container whose main process exited (it kills the container's cgroup, or its PID namespace
// ends with its init): its group, then every process tagged as the container's, which finds
// what left the group (setsid) and what exec'd commands started. Called before the run's end is
// recorded, so before a restart starts processes with the same tag.
func (c *container) killRest(pgid int) {
	c.r.reaper.killGroup(pgid)
	killTagged(c.tag())
}

// processTagEnv is the environment variable that tags every process of a container: its
// command and the commands exec'd in it get it, and what they start inherits it, whatever
// process group or session it moves to. A process that clears or rewrites its environment
// loses it (and is not found).
const processTagEnv = "KCLIENT_TESTENV_CONTAINER"

// tag is the container's processTagEnv entry: <server token>/<pod uid>/<container>.
func (c *container) tag() string {
	return processTagEnv + "=" + c.r.token + "/" + c.uid + "/" + c.name
}

// killTagged SIGKILLs every process whose environment holds the entry tag (Linux: found in
// /proc; elsewhere none is found), scanning again until a scan finds none, so that what one
// started while the scan ran is found too (bounded, against a process that forks faster than
// it is killed).
func killTagged(tag string) {
	want := []byte(tag)
	for range 10 {
		if killTaggedOnce(want) == 0 {
			return
		}
	}
}

// killTaggedOnce SIGKILLs the processes tagged want that one scan of /proc finds, and returns
// how many it found.
func killTaggedOnce(want []byte) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self, found := os.Getpid(), 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !hasEnv(pid, want) {
			continue
		}
		// A handle on the process (a pidfd, where the system has them), then the tag read
		// again: a process that ended after the first read and whose id was reused is not
		// signalled (the handle names the new one, which is not tagged).
		p, err := os.FindProcess(pid)
		if err != nil {
			continue
		}
		if hasEnv(pid, want) {
			found++
			_ = p.Signal(os.Kill)
		}
		_ = p.Release()
	}
	return found
}

// hasEnv reports whether process pid's environment holds the entry want (a zombie's, or
// another user's process's, reads as empty).
func hasEnv(pid int, want []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, entry := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(entry, want) {
			return true
		}
	}
	return false
}

// trackExec registers a command just exec'd in the container (the leader of process group
// pid), to be killed with the container, or kills it now if the container is already stopped.
// The returned function unregisters it once it has been waited for.
func (c *container) trackExec(pid int) (untrack func()) {
	c.r.reaper.add(pid)
	c.mu.Lock()
	select {
	case <-c.stop:
		// kill ran (it closes stop before it takes mu): it did not see this one.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	default:
		if c.execs == nil {
			c.execs = map[int]struct{}{}
		}
		c.execs[pid] = struct{}{}
	}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.execs, pid)
		c.mu.Unlock()
		c.r.reaper.del(pid)
	}
}

// run is the container's current run.
func (c *container) run() *containerProcess {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// previous is the log file of the container's previous run, or "" before its first restart.
func (c *container) previous() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.previousLog
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

// attach connects a client to the running process until it exits or the client goes away. With
// a tty, the client's terminal sizes resize the process's terminal.
func (p *containerProcess) attach(ctx context.Context, in io.Reader, stdout, stderr io.Writer, resize <-chan remotecommand.TerminalSize) error {
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
	if resize != nil && p.tty != nil {
		go func() {
			for size := range resize {
				_ = cpty.Setsize(p.tty, &cpty.Winsize{Rows: size.Height, Cols: size.Width})
			}
		}()
	}
	if in != nil && p.stdin != nil {
		go func() {
			_, _ = io.Copy(p.stdin, in)
			if p.once {
				if p.tty != nil {
					// A terminal cannot be half closed: end of input is its EOF character
					// (^D), which a program reading the terminal sees as end of file.
					_, _ = p.stdin.Write([]byte{4})
				} else {
					_ = p.stdin.Close()
				}
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
func (r *containerRuntime) lookup(ctx context.Context, namespace, pod, container string) (*container, error) {
	p := r.waitPod(ctx, namespace, pod)
	if p == nil {
		return nil, fmt.Errorf("pod %s/%s is not running on a simulated node", namespace, pod)
	}
	c := p.containers[container]
	if c == nil {
		return nil, fmt.Errorf("container %q not found in pod %s/%s", container, namespace, pod)
	}
	return c, nil
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
