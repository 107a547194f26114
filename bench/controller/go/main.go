// The Go side of kclient's controller benchmark (see ../README.md): the fixture tool (setup,
// churn, cleanup) and the controller-runtime contender (controller).
//
//	bench-controller setup      -namespace NS -parents 1000 -children 10
//	bench-controller churn      -namespace NS -parents 1000 -children 10 -rate 1000 -seconds 10 -log FILE
//	bench-controller controller NAMESPACE PARENTS LOG   (the same arguments as the Rust sides)
//	bench-controller cleanup    -namespace NS
//
// The cluster comes from KUBECONFIG. Every subcommand prints one JSON object per line.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The custom resource that owns the ConfigMaps.
var (
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	parentGVR = schema.GroupVersionResource{Group: "bench.kclient.dev", Version: "v1", Resource: "parents"}
	parentGVK = schema.GroupVersionKind{Group: "bench.kclient.dev", Version: "v1", Kind: "Parent"}
)

const crdName = "parents.bench.kclient.dev"

// started is when the process began, the zero of every time it reports.
var started = time.Now()

func main() {
	if len(os.Args) < 2 {
		fail("usage: bench-controller setup|churn|controller|cleanup [flags]")
	}
	if os.Args[1] == "controller" || os.Args[1] == "controller-metadata" {
		if len(os.Args) != 5 {
			fail("usage: bench-controller controller|controller-metadata NAMESPACE PARENTS LOG")
		}
		n, err := strconv.Atoi(os.Args[3])
		if err != nil {
			fail("PARENTS: %v", err)
		}
		runController(os.Args[2], n, os.Args[4], os.Args[1] == "controller-metadata")
		return
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	namespace := fs.String("namespace", "kclient-bench-controller", "namespace of the fixture")
	parents := fs.Int("parents", 1000, "number of Parent objects")
	children := fs.Int("children", 10, "ConfigMaps owned by each Parent")
	rate := fs.Int("rate", 1000, "child updates per second (churn)")
	seconds := fs.Float64("seconds", 10, "how long to churn")
	logFile := fs.String("log", "", "where to write the write or reconcile log")
	_ = fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "setup":
		setup(*namespace, *parents, *children)
	case "churn":
		churn(*namespace, *parents, *children, *rate, *seconds, *logFile)
	case "cleanup":
		cleanup(*namespace)
	default:
		fail("unknown subcommand %q", os.Args[1])
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench-controller: "+format+"\n", a...)
	os.Exit(1)
}

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

// restConfig is the fixture tools' config: high QPS, so that setup and churn are limited by the
// server and not by client-side throttling.
func restConfig() *rest.Config {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 5000, 5000
	return cfg
}

func parentName(p int) string           { return fmt.Sprintf("p-%04d", p) }
func childName(p, c int) string         { return fmt.Sprintf("c-%04d-%02d", p, c) }
func parentKey(ns string, p int) string { return ns + "/" + parentName(p) }

// setup creates the CRD, the namespace, the Parents and their ConfigMaps. The ConfigMaps are
// not all alike: their data, labels and annotations vary in number and size, so that no
// client's cache sees only identical shapes.
func setup(namespace string, parents, children int) {
	ctx := context.Background()
	cfg := restConfig()
	dyn := dynamic.NewForConfigOrDie(cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)

	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": crdName},
		"spec": map[string]any{
			"group": "bench.kclient.dev",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "parents", "singular": "parent", "kind": "Parent", "listKind": "ParentList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": map[string]any{
							"size":  map[string]any{"type": "integer"},
							"owner": map[string]any{"type": "string"},
						}},
					},
				}},
			}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fail("create CRD: %v", err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got, err := dyn.Resource(crdGVR).Get(ctx, crdName, metav1.GetOptions{})
		if err == nil && established(got) {
			break
		}
		if time.Now().After(deadline) {
			fail("CRD %s not established after 60s", crdName)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fail("create namespace: %v", err)
	}

	uids := make([]types.UID, parents)
	parallel(parents, func(p int) {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "bench.kclient.dev/v1",
			"kind":       "Parent",
			"metadata":   map[string]any{"name": parentName(p), "namespace": namespace, "labels": map[string]any{"bench": "controller"}},
			"spec":       map[string]any{"size": int64(children), "owner": fmt.Sprintf("team-%d", p%17)},
		}}
		for {
			got, err := dyn.Resource(parentGVR).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				got, err = dyn.Resource(parentGVR).Namespace(namespace).Get(ctx, parentName(p), metav1.GetOptions{})
			}
			if err == nil {
				uids[p] = got.GetUID()
				return
			}
			if !apierrors.IsNotFound(err) { // NotFound: the CRD's REST storage is not served yet
				fail("create parent %d: %v", p, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	truth := true
	parallel(parents*children, func(i int) {
		p, c := i/children, i%children
		rng := rand.New(rand.NewSource(int64(i)))
		data := map[string]string{"v": "0"}
		for k := 0; k < 1+rng.Intn(5); k++ {
			data[fmt.Sprintf("key-%d", k)] = randomText(rng, 16+rng.Intn(400))
		}
		labels := map[string]string{"bench": "controller", "parent": parentName(p)}
		for k := 0; k < rng.Intn(4); k++ {
			labels[fmt.Sprintf("tier-%d", k)] = randomText(rng, 4+rng.Intn(12))
		}
		annotations := map[string]string{}
		if rng.Intn(3) == 0 {
			annotations["note.bench.kclient.dev/text"] = randomText(rng, 20+rng.Intn(200))
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: childName(p, c), Namespace: namespace, Labels: labels, Annotations: annotations,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "bench.kclient.dev/v1", Kind: "Parent", Name: parentName(p), UID: uids[p],
					Controller: &truth, BlockOwnerDeletion: &truth,
				}},
			},
			Data: data,
		}
		if _, err := cs.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail("create configmap %s: %v", cm.Name, err)
		}
	})
	emit(map[string]any{"event": "setup", "parents": parents, "children": parents * children, "seconds": time.Since(started).Seconds()})
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func randomText(rng *rand.Rand, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.Intn(len(alphabet)-1)]
	}
	return string(b)
}

// parallel runs f(0..n) on 32 goroutines.
func parallel(n int, f func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// churn changes child ConfigMaps at a fixed rate with a merge patch of one data value, and logs
// each write as "namespace/parent t0 t1" (Unix nanoseconds before sending and after the
// response). Children are taken in a shuffled order, so that each Parent's children change at
// spread-out times.
func churn(namespace string, parents, children, rate int, seconds float64, logFile string) {
	if logFile == "" {
		fail("churn needs -log")
	}
	cs := kubernetes.NewForConfigOrDie(restConfig())
	order := rand.New(rand.NewSource(1)).Perm(parents * children)
	total := int(float64(rate) * seconds)
	type write struct {
		parent int
		t0, t1 int64
		ok     bool
	}
	writes := make([]write, total)
	// Every value is new (this run's start time and the write's number), so that no patch is a
	// no-op that the server would not send as an event.
	nonce := time.Now().UnixNano()
	jobs := make(chan int, 256)
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				idx := order[i%len(order)]
				p, c := idx/children, idx%children
				patch := fmt.Sprintf(`{"data":{"v":"%d-%d"}}`, nonce, i)
				t0 := time.Now().UnixNano()
				_, err := cs.CoreV1().ConfigMaps(namespace).Patch(context.Background(), childName(p, c), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				writes[i] = write{parent: p, t0: t0, t1: time.Now().UnixNano(), ok: err == nil}
			}
		}()
	}
	begin := time.Now()
	period := time.Duration(float64(time.Second) / float64(rate))
	for i := 0; i < total; i++ {
		if d := time.Until(begin.Add(time.Duration(i) * period)); d > 0 {
			time.Sleep(d)
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(begin).Seconds()
	f, err := os.Create(logFile)
	if err != nil {
		fail("create %s: %v", logFile, err)
	}
	w := bufio.NewWriter(f)
	failed := 0
	for _, wr := range writes {
		if !wr.ok {
			failed++
			continue
		}
		fmt.Fprintf(w, "%s %d %d\n", parentKey(namespace, wr.parent), wr.t0, wr.t1)
	}
	if err := w.Flush(); err != nil {
		fail("write %s: %v", logFile, err)
	}
	_ = f.Close()
	emit(map[string]any{"event": "churn", "writes": total - failed, "failed": failed, "seconds": elapsed, "rate": float64(total-failed) / elapsed})
}

func cleanup(namespace string) {
	ctx := context.Background()
	cfg := restConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	err := cs.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		fail("delete namespace: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			fail("namespace %s still there after 5 minutes", namespace)
		}
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	if err := dyn.Resource(crdGVR).Delete(ctx, crdName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		fail("delete CRD: %v", err)
	}
	emit(map[string]any{"event": "cleanup"})
}

// reconcileLog records every reconcile's key and start time, and reports once every Parent
// has been reconciled.
type reconcileLog struct {
	mu      sync.Mutex
	entries []entry
	seen    map[string]struct{}
	want    int
}

type entry struct {
	key string
	at  int64
}

func (l *reconcileLog) record(key string) {
	now := time.Now()
	l.mu.Lock()
	l.entries = append(l.entries, entry{key, now.UnixNano()})
	_, old := l.seen[key]
	l.seen[key] = struct{}{}
	all := !old && len(l.seen) == l.want
	l.mu.Unlock()
	if all {
		emit(map[string]any{"event": "all_reconciled", "seconds": now.Sub(started).Seconds()})
	}
}

func (l *reconcileLog) write(file string) {
	f, err := os.Create(file)
	if err != nil {
		fail("create %s: %v", file, err)
	}
	w := bufio.NewWriter(f)
	l.mu.Lock()
	for _, e := range l.entries {
		fmt.Fprintf(w, "%s %d\n", e.key, e.at)
	}
	l.mu.Unlock()
	if err := w.Flush(); err != nil {
		fail("write %s: %v", file, err)
	}
	_ = f.Close()
}

type reconciler struct{ log *reconcileLog }

func (r reconciler) Reconcile(_ context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.log.record(req.Namespace + "/" + req.Name)
	return ctrl.Result{}, nil
}

// runController is the controller-runtime contender: a manager caching one namespace, a
// controller for Parents (unstructured: no Go type is generated for the benchmark's CRD) that
// owns ConfigMaps, 4 workers and a reconcile that only records itself. It runs until its
// standard input closes, then writes its reconcile log. With onlyMetadata the ConfigMaps are
// watched and cached as metadata only (builder.OnlyMetadata).
func runController(namespace string, parents int, logFile string, onlyMetadata bool) {
	if logFile == "" {
		fail("controller needs -log")
	}
	ctrl.SetLogger(logr.Discard())
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		fail("manager: %v", err)
	}
	log := &reconcileLog{seen: map[string]struct{}{}, want: parents}
	parent := &unstructured.Unstructured{}
	parent.SetGroupVersionKind(parentGVK)
	var ownsOpts []builder.OwnsOption
	if onlyMetadata {
		ownsOpts = append(ownsOpts, builder.OnlyMetadata)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("bench").
		For(parent).
		Owns(&corev1.ConfigMap{}, ownsOpts...).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(reconciler{log})
	if err != nil {
		fail("controller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := mgr.Start(ctx); err != nil {
		fail("manager: %v", err)
	}
	log.write(logFile)
	emit(map[string]any{"event": "done", "reconciles": len(log.entries)})
}
