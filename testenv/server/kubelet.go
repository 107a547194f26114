package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	cpty "github.com/creack/pty"
	"k8s.io/apiserver/pkg/util/flushwriter"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// kubelet is the simulated nodes' kubelet API: the streaming endpoints the apiserver proxies
// pods/exec, pods/attach, pods/portforward and pods/log to, served with the kubelet's own
// handlers (k8s.io/cri-streaming) over HTTPS on 127.0.0.1:<kubelet port>. Every simulated node
// has this address, so one server serves the pods of all of them.
//
//   - exec runs the command as a local process in the container's directory; stdin reaches it
//     and is closed at the client's end of input, the exit code is reported, a TTY is a pty;
//   - attach connects to the container's running process (see containerRuntime);
//   - port-forward of port P connects to 127.0.0.1:P;
//   - logs are read from the container's CRI-format log file.
//
// Only the apiserver may call it: it must present a client certificate of the testenv CA.
type kubelet struct {
	runtime *containerRuntime
}

const (
	// How long a stream may stay idle, and how long the client may take to open its streams.
	streamIdleTimeout     = 4 * time.Hour
	streamCreationTimeout = remotecommand.DefaultStreamCreationTimeout
)

// serveKubelet serves the kubelet API on listener (127.0.0.1:<kubelet port>) until ctx ends.
func serveKubelet(ctx context.Context, listener net.Listener, pki *pkiFiles, k *kubelet) error {
	cert, err := tls.LoadX509KeyPair(pki.servingCert, pki.servKey)
	if err != nil {
		_ = listener.Close()
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pki.caPEM)
	mux := http.NewServeMux()
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", k.serveExec)
	mux.HandleFunc("/attach/{namespace}/{pod}/{container}", k.serveAttach)
	mux.HandleFunc("/portForward/{namespace}/{pod}", k.servePortForward)
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", k.serveLogs)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	server := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    pool,
			MinVersion:   tls.VersionTLS12,
		},
	}
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	if err := server.ServeTLS(listener, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// podName is how the handlers below name a pod to the streaming library: "namespace/name".
func podName(r *http.Request) string {
	return r.PathValue("namespace") + "/" + r.PathValue("pod")
}

func (k *kubelet) serveExec(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := r.URL.Query()["command"]
	if len(cmd) == 0 {
		http.Error(w, "no command", http.StatusBadRequest)
		return
	}
	remotecommand.ServeExec(w, r, k, podName(r), "", r.PathValue("container"), cmd, opts,
		streamIdleTimeout, streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

func (k *kubelet) serveAttach(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	remotecommand.ServeAttach(w, r, k, podName(r), "", r.PathValue("container"), opts,
		streamIdleTimeout, streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

func (k *kubelet) servePortForward(w http.ResponseWriter, r *http.Request) {
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	portforward.ServePortForward(w, r, k, podName(r), "", opts,
		streamIdleTimeout, streamCreationTimeout, portforward.SupportedProtocols)
}

// splitPodName undoes podName.
func splitPodName(name string) (string, string) {
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			return name[:i], name[i+1:]
		}
	}
	return "", name
}

// ExecInContainer runs cmd as a local process of the container (remotecommand.Executor).
func (k *kubelet) ExecInContainer(ctx context.Context, name, _ string, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	namespace, pod := splitPodName(name)
	ctr, err := k.runtime.lookup(ctx, namespace, pod, container)
	if err != nil {
		return err
	}
	dir, err := k.runtime.workDir(ctr.uid, container)
	if err != nil {
		return err
	}
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Dir = dir
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HOSTNAME=" + pod, ctr.tag()}
	if tty {
		return execWithTTY(c, ctr, in, out, resize)
	}
	// Its own process group, so that the end of the request can stop its children too.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Stdout = out
	c.Stderr = errOut
	var stdin io.WriteCloser
	if in != nil {
		if stdin, err = c.StdinPipe(); err != nil {
			return err
		}
	}
	// After the process exits, children that keep its output open get this long.
	c.WaitDelay = 5 * time.Second
	if err := c.Start(); err != nil {
		return err
	}
	// Killed with the container while it runs; what it leaves running after it exits is not.
	defer ctr.trackExec(c.Process.Pid)()
	if stdin != nil {
		go func() {
			// The client's end of input is the command's: close the pipe (upstream kwok left it
			// open, so `echo x | kubectl exec -i POD -- cat` never ended).
			_, _ = io.Copy(stdin, in)
			_ = stdin.Close()
		}()
	}
	return exitError(c.Wait())
}

// execWithTTY runs c on a new pseudo-terminal: input and output both go through it, and resize
// events resize it.
func execWithTTY(c *exec.Cmd, ctr *container, in io.Reader, out io.Writer, resize <-chan remotecommand.TerminalSize) error {
	ptmx, err := cpty.Start(c)
	if err != nil {
		return err
	}
	defer ctr.trackExec(c.Process.Pid)()
	defer func() { _ = ptmx.Close() }()
	if resize != nil {
		go func() {
			for size := range resize {
				_ = cpty.Setsize(ptmx, &cpty.Winsize{Rows: size.Height, Cols: size.Width})
			}
		}()
	}
	if in != nil {
		go func() { _, _ = io.Copy(ptmx, in) }()
	}
	var output sync.WaitGroup
	output.Add(1)
	go func() {
		defer output.Done()
		// Ends with EIO once the process (and every holder of the terminal) has exited.
		_, _ = io.Copy(out, ptmx)
	}()
	err = c.Wait()
	output.Wait()
	return exitError(err)
}

// AttachContainer connects to the container's running process (remotecommand.Attacher); the
// client's terminal sizes resize the terminal of a container with `tty: true`.
func (k *kubelet) AttachContainer(ctx context.Context, name, _ string, container string, in io.Reader, out, errOut io.WriteCloser, _ bool, resize <-chan remotecommand.TerminalSize) error {
	namespace, pod := splitPodName(name)
	c, err := k.runtime.lookup(ctx, namespace, pod, container)
	if err != nil {
		return err
	}
	var stdout, stderr io.Writer
	if out != nil {
		stdout = out
	}
	if errOut != nil {
		stderr = errOut
	}
	return c.run().attach(ctx, in, stdout, stderr, resize)
}

// PortForward connects the stream to 127.0.0.1:port (portforward.PortForwarder).
func (k *kubelet) PortForward(ctx context.Context, name, _ string, port int32, stream io.ReadWriteCloser) error {
	defer func() { _ = stream.Close() }()
	namespace, pod := splitPodName(name)
	if k.runtime.waitPod(ctx, namespace, pod) == nil {
		return fmt.Errorf("pod %s/%s is not running on a simulated node", namespace, pod)
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port %d of pod %s/%s (127.0.0.1:%d): %w", port, namespace, pod, port, err)
	}
	defer func() { _ = conn.Close() }()
	toPod := make(chan struct{})
	go func() {
		defer close(toPod)
		_, _ = io.Copy(conn, stream)
		// The client's end of data is the connection's write side ending.
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
	}()
	_, _ = io.Copy(stream, conn)
	return nil
}

// serveLogs answers /containerLogs with the log file of the container's current run, or with
// previous=true of its previous run (the one before its last restart), as the kubelet does.
func (k *kubelet) serveLogs(w http.ResponseWriter, r *http.Request) {
	c, err := k.runtime.lookup(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	proc := c.run()
	logPath := proc.logPath
	if q.Get("previous") == "true" {
		if logPath = c.previous(); logPath == "" {
			http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", r.PathValue("container"), r.PathValue("pod")), http.StatusBadRequest)
			return
		}
		proc = nil // an ended run: following it ends at the end of its log
	}
	opts := &crilogs.LogOptions{Follow: q.Get("follow") == "true", Timestamp: q.Get("timestamps") == "true"}
	parseInt := func(name string) (*int64, error) {
		v := q.Get(name)
		if v == "" {
			return nil, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", name, v, err)
		}
		return &n, nil
	}
	if opts.TailLines, err = parseInt("tailLines"); err == nil {
		if opts.LimitBytes, err = parseInt("limitBytes"); err == nil {
			var since *int64
			if since, err = parseInt("sinceSeconds"); err == nil && since != nil {
				opts.Since = time.Now().Add(-time.Duration(*since) * time.Second)
			}
		}
	}
	if err == nil && q.Get("sinceTime") != "" {
		var t time.Time
		if t, err = time.Parse(time.RFC3339, q.Get("sinceTime")); err == nil && t.After(opts.Since) {
			opts.Since = t
		}
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fw := flushwriter.Wrap(w)
	_ = crilogs.ReadLogs(r.Context(), logPath, logPath, opts, processStatus{proc: proc}, fw, fw)
}

// processStatus answers the one question crilogs asks the runtime when following a log: does
// the container still run?
type processStatus struct {
	criapi.RuntimeService // nil: crilogs calls nothing else
	proc                  *containerProcess
}

// ContainerStatus reports RUNNING while the process runs, EXITED after (and for a previous
// run, proc nil).
func (s processStatus) ContainerStatus(context.Context, string, bool) (*runtimeapi.ContainerStatusResponse, error) {
	state := runtimeapi.ContainerState_CONTAINER_EXITED
	if s.proc != nil && s.proc.running() {
		state = runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{State: state}}, nil
}
