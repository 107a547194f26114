// Command testenv runs a real kube-apiserver for kclient's tests and examples.
//
// One process holds an embedded etcd, the upstream kube-apiserver and, in-process,
// kube-controller-manager controllers (garbage collector, namespace, pod GC, PVC and PV
// protection, and the workload ones: deployment, replicaset, statefulset, daemonset, job,
// cronjob, endpointslice, serviceaccount, serviceaccount-token), kube-scheduler, kwok's node and
// pod controllers managing --nodes simulated nodes (kwok-node-0, ...), and a simulated kubelet
// that serves exec, attach, logs and port-forward for their pods by running local processes;
// all bound to 127.0.0.1. Its data directory keeps certificates, identities, ports and the etcd data, so
// stopping and starting on the same directory is a real restart with the same objects.
//
// On start it writes one kubeconfig per identity into the data directory and prints a line
//
//	READY admin=<path> restricted=<path> cert=<path>
//
// once /readyz answers ok. SIGTERM or SIGINT stops everything and exits 0. SIGUSR1 compacts
// etcd to its current revision and then writes "<count> <revision>" to <data-dir>/compaction.
//
// kclient-testenv's TestEnv::builder starts it with --exit-with-stdin (the end of stdin stops it
// like SIGTERM, so a test process that exits or dies without stopping it leaves nothing running)
// and --remove-data-dir (the data directory is deleted on a clean exit, and on a stop asked for
// before the server was ready, such as the test process ending while it started; it is kept
// after a failure, and when the parent wrote to stdin before closing it, as kclient-testenv does
// when it gives up on a start and names the log in the directory).
//
// The data directory is locked (flock on <data-dir>/testenv.lock) while the process runs: a
// second testenv on it fails at once instead of rewriting the first one's kubeconfigs. Run
// without --start-claimed (which kclient-testenv passes, holding the lock itself), it also
// takes <data-dir>/testenv.start.lock while it takes that lock: a directory a start of
// kclient-testenv has claimed, whose server does not run yet, is in use too.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for certificates, kubeconfigs and etcd data (required)")
	compaction := flag.Duration("etcd-compaction-interval", time.Minute, "how often the apiserver compacts etcd; short values let tests provoke 410 Gone")
	controllers := flag.Bool("controllers", true, "run the controllers, the scheduler and the simulated nodes in-process")
	nodes := flag.Int("nodes", 1, "how many simulated nodes (kwok-node-0, ...) to create and run; 0 for none")
	verbosity := flag.Int("v", 0, "log verbosity of the Kubernetes components")
	port := flag.Int("secure-port", 0, "the apiserver's port on 127.0.0.1 (default: the one in the data directory, else a free one)")
	exitWithStdin := flag.Bool("exit-with-stdin", false, "stop, as on SIGTERM, when stdin reaches its end (the parent closed it or exited); any input before the end asks to keep the data directory")
	removeDataDir := flag.Bool("remove-data-dir", false, "delete the data directory on a clean exit or a stop asked for, also before ready (kept after a failure)")
	runtimeConfig := flag.String("runtime-config", "", "kube-apiserver's --runtime-config, such as api/all=true to serve every alpha and beta group version as well")
	startClaimed := flag.Bool("start-claimed", false, "the caller holds <data-dir>/"+startLockFileName+" for this start (kclient-testenv does); without it this process takes that lock while it locks the data directory")
	flag.Parse()
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "testenv: --data-dir is required")
		os.Exit(2)
	}
	if *nodes < 0 {
		fmt.Fprintln(os.Stderr, "testenv: --nodes must be 0 or more")
		os.Exit(2)
	}

	// stopCtx ends when a stop is asked for: SIGTERM, SIGINT, or the end of stdin.
	stopCtx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Whether the parent asked to keep the data directory.
	var keep atomic.Bool
	if *exitWithStdin {
		go func() {
			// Read errors count as the end too: either way nobody is left to stop us. Input
			// before the end asks to keep the data directory (kclient-testenv sends some when
			// it gives up on a start and names the log in it).
			n, _ := io.Copy(io.Discard, os.Stdin)
			if n > 0 {
				keep.Store(true)
			}
			stop()
		}()
	}
	// A stop asked for is a clean end, also before the server was ready (the test process
	// ended while it started, Ctrl-C): nothing failed that the directory could explain. After
	// a failure it stays for inspection (it holds the caller's log).
	removeAfter := func(err error) {
		if *removeDataDir && (err == nil || stopCtx.Err() != nil) && !keep.Load() {
			if rmErr := os.RemoveAll(*dataDir); rmErr != nil {
				fmt.Fprintf(os.Stderr, "testenv: removing the data directory: %v\n", rmErr)
			}
		}
	}
	// The apiserver exits the process through klog when a post-start hook fails, as its
	// hooks do when stopped while it starts.
	klog.OsExit = func(code int) {
		removeAfter(fmt.Errorf("exit status %d", code))
		os.Exit(code)
	}
	err := run(stopCtx, *dataDir, *startClaimed, *port, *compaction, *controllers, *nodes, *verbosity, *runtimeConfig)
	removeAfter(err)
	if err != nil {
		if stopCtx.Err() != nil {
			fmt.Fprintf(os.Stderr, "testenv: stopped while starting (%v)\n", err)
			return
		}
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		os.Exit(1)
	}
}

func run(stopCtx context.Context, dataDir string, startClaimed bool, port int, compaction time.Duration, withControllers bool, nodes int, verbosity int, runtimeConfig string) error {
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	lock, err := lockDataDir(dir, startClaimed)
	if err != nil {
		return err
	}
	defer lock.Close()
	st, ls, err := loadOrCreateState(dir, port)
	if err != nil {
		return fmt.Errorf("preparing %s: %w", dir, err)
	}
	// Those not handed over by the end.
	defer ls.close()
	pki, err := ensurePKI(dir)
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	ids, err := ensureIdentities(dir, st, pki)
	if err != nil {
		return fmt.Errorf("identities: %w", err)
	}

	ctx, cancel := context.WithCancel(stopCtx)
	defer cancel()

	etcd, err := startEtcd(dir, st, ls)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.Close()
	go compactOnSignal(ctx, dir, etcd)

	apiErr := make(chan error, 1)
	apiDone := make(chan struct{})
	apiListener := ls.api
	ls.api = nil
	go func() {
		apiErr <- runAPIServer(ctx, dir, st, apiListener, pki, ids, compaction, verbosity, runtimeConfig)
		close(apiDone)
	}()

	if err := waitReady(ctx, st, pki, ids, apiErr); err != nil {
		cancel()
		// The apiserver still writes into the data directory while it stops.
		select {
		case <-apiDone:
		case <-time.After(30 * time.Second):
		}
		return err
	}

	var components sync.WaitGroup
	if withControllers {
		component := func(name string, f func() error) {
			components.Add(1)
			go func() {
				defer components.Done()
				if err := f(); err != nil && ctx.Err() == nil {
					fmt.Fprintf(os.Stderr, "testenv: %s stopped: %v\n", name, err)
				}
			}()
		}
		component("controllers", func() error { return runControllers(ctx, ids.adminKubeconfig, pki) })
		component("kube-scheduler", func() error { return runScheduler(ctx, ids.adminKubeconfig) })
		if nodes > 0 {
			kubeletListener := ls.kubelet
			ls.kubelet = nil
			if err := startNodes(ctx, dir, st, kubeletListener, pki, ids, nodes, verbosity, component); err != nil {
				cancel()
				return err
			}
		}
	}
	componentsDone := make(chan struct{})
	go func() {
		components.Wait()
		close(componentsDone)
	}()

	fmt.Printf("READY admin=%s restricted=%s cert=%s server=https://127.0.0.1:%d\n",
		ids.adminKubeconfig, ids.restrictedKubeconfig, ids.certKubeconfig, st.APIPort)

	select {
	case <-ctx.Done():
	case err := <-apiErr:
		if err != nil {
			return fmt.Errorf("kube-apiserver: %w", err)
		}
		return fmt.Errorf("kube-apiserver exited")
	}
	// The apiserver drains in-flight requests after the context ends; give it a bound.
	select {
	case <-apiErr:
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "testenv: kube-apiserver did not stop within 30s")
	}
	select {
	case <-componentsDone:
	case <-time.After(10 * time.Second):
	}
	return nil
}
