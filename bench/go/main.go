// Command bench is the client-go side of kclient's side-by-side benchmarks (see ../README.md),
// and the tool that prepares their fixture:
//
//	bench setup    -namespace NS -n 5000   create N realistic Pods (three field managers)
//	bench setup-mixed -namespace NS -n 5000
//	                                       create N objects of five kinds, each with its own
//	                                       labels, annotations and optional fields (mixed.go)
//	bench dump     -namespace NS -out F    write the raw LIST response (JSON) to F
//	bench informer -namespace NS [-json] [-transform | -metadata | -mixed]
//	                                       heap held by a synced SharedInformerFactory Pod
//	                                       informer (-mixed: one informer per kind of the
//	                                       mixed fixture), and the time it took to sync
//	bench decode   -file F -n 5            decode a PodList with encoding/json and with
//	                                       client-go's scheme codec
//	bench cleanup  -namespace NS           delete the objects and the namespace, wait until gone
//
// Each measuring command prints one JSON object per line for bench/run to tabulate.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: bench setup|setup-mixed|dump|informer|decode|cleanup [flags]")
	}
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	namespace := fs.String("namespace", "kclient-bench", "namespace of the benchmark Pods")
	n := fs.Int("n", 5000, "setup: Pods to create; decode: timed runs")
	out := fs.String("out", "", "dump: output file")
	file := fs.String("file", "", "decode: a PodList JSON file")
	transform := fs.Bool("transform", false, "informer: drop managedFields before caching")
	mixed := fs.Bool("mixed", false, "informer: one informer per kind of the mixed fixture (setup-mixed)")
	metadataOnly := fs.Bool("metadata", false, "informer: a metadata-only informer (metadatainformer, PartialObjectMetadata)")
	jsonWire := fs.Bool("json", false, "informer: ask for JSON on the wire (client-go's typed clients prefer protobuf for built-in types)")
	protobufWire := fs.Bool("protobuf", false, "dump: write the list as the server sends it in protobuf; decode: the file is protobuf")
	_ = fs.Parse(args)

	switch cmd {
	case "setup":
		setup(clientset(), *namespace, *n)
	case "setup-mixed":
		setupMixed(clientset(), *namespace, *n)
	case "dump":
		dump(*namespace, *out, *protobufWire)
	case "informer":
		if *metadataOnly {
			metadataInformer(*namespace)
			return
		}
		cs := clientset()
		if *jsonWire {
			cs = jsonClientset()
		}
		if *mixed {
			mixedInformer(cs, *namespace, *jsonWire)
			return
		}
		informer(cs, *namespace, *transform, *jsonWire)
	case "decode":
		if *protobufWire {
			decodeProtobuf(*file, *n)
		} else {
			decode(*file, *n)
		}
	case "cleanup":
		cleanup(clientset(), *namespace)
	default:
		fail("unknown command %q", cmd)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...)
	os.Exit(1)
}

func restConfig() *rest.Config {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		fail("loading kubeconfig: %v", err)
	}
	return cfg
}

func clientset() *kubernetes.Clientset {
	cfg := restConfig()
	// Setup sends ~15k requests; the informer makes one list (or watch) either way.
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail("client: %v", err)
	}
	return cs
}

// jsonClientset is clientset with JSON on the wire. Since v0.35 client-go's typed clients for
// built-in types ask for protobuf unless a content type is configured; setting one keeps JSON,
// the only encoding kclient and kube-rs speak, for a like-for-like comparison.
func jsonClientset() *kubernetes.Clientset {
	cfg := restConfig()
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail("client: %v", err)
	}
	return cs
}

// podApply is the full Pod as a deployer would apply it: two containers, env from literals,
// fields and secrets, probes, resources, four volumes, labels, annotations, an owner.
func podApply(namespace, ownerUID string, i int) []byte {
	name := fmt.Sprintf("bench-web-7d9f8b6c5-%05d", i)
	env := []map[string]any{
		{"name": "APP_ENV", "value": "production"},
		{"name": "LOG_LEVEL", "value": "info"},
		{"name": "HTTP_PORT", "value": "8080"},
		{"name": "DATABASE_URL", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "web-db", "key": "url"}}},
		{"name": "POD_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
		{"name": "POD_NAMESPACE", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.namespace"}}},
	}
	probe := func(path string, delay int) map[string]any {
		return map[string]any{
			"httpGet":             map[string]any{"path": path, "port": 8080, "scheme": "HTTP"},
			"initialDelaySeconds": delay, "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3,
		}
	}
	pod := map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"name":      name,
			"namespace": namespace,
			"labels": map[string]any{
				"app.kubernetes.io/name":      "web",
				"app.kubernetes.io/instance":  "web-production",
				"app.kubernetes.io/version":   "1.24.3",
				"app.kubernetes.io/component": "frontend",
				"app.kubernetes.io/part-of":   "storefront",
				"pod-template-hash":           "7d9f8b6c5",
			},
			"annotations": map[string]any{
				"prometheus.io/scrape":              "true",
				"prometheus.io/port":                "9090",
				"kubectl.kubernetes.io/restartedAt": "2026-11-20T14:03:12Z",
				"checksum/config":                   fmt.Sprintf("%064x", i*7919+1),
			},
			"ownerReferences": []map[string]any{{
				"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f8b6c5",
				"uid": ownerUID, "controller": false, "blockOwnerDeletion": true,
			}},
		},
		"spec": map[string]any{
			"schedulerName":                 unscheduled,
			"serviceAccountName":            "web",
			"terminationGracePeriodSeconds": 45,
			"nodeSelector":                  map[string]any{"kubernetes.io/os": "linux", "node.kubernetes.io/pool": "general"},
			"tolerations": []map[string]any{
				{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
			},
			"containers": []map[string]any{
				{
					"name":            "web",
					"image":           "registry.example.com/storefront/web:1.24.3",
					"imagePullPolicy": "IfNotPresent",
					"args":            []string{"--config=/etc/web/config.yaml", "--listen=:8080", "--metrics=:9090"},
					"ports": []map[string]any{
						{"name": "http", "containerPort": 8080, "protocol": "TCP"},
						{"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
					},
					"env": env,
					"resources": map[string]any{
						"requests": map[string]any{"cpu": "250m", "memory": "256Mi"},
						"limits":   map[string]any{"cpu": "1", "memory": "512Mi"},
					},
					"volumeMounts": []map[string]any{
						{"name": "config", "mountPath": "/etc/web", "readOnly": true},
						{"name": "tls", "mountPath": "/etc/tls", "readOnly": true},
						{"name": "cache", "mountPath": "/var/cache/web"},
					},
					"livenessProbe":  probe("/healthz", 15),
					"readinessProbe": probe("/readyz", 5),
					"securityContext": map[string]any{
						"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
						"capabilities": map[string]any{"drop": []string{"ALL"}},
					},
				},
				{
					"name":  "proxy",
					"image": "registry.example.com/mesh/proxy:1.31.2",
					"args":  []string{"proxy", "sidecar", "--concurrency=2"},
					"ports": []map[string]any{{"name": "proxy-admin", "containerPort": 15000, "protocol": "TCP"}},
					"env": []map[string]any{
						{"name": "PROXY_LOG_LEVEL", "value": "warning"},
						{"name": "POD_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
					},
					"resources": map[string]any{
						"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
						"limits":   map[string]any{"cpu": "500m", "memory": "256Mi"},
					},
					"volumeMounts": []map[string]any{{"name": "proxy-certs", "mountPath": "/etc/certs", "readOnly": true}},
				},
			},
			"volumes": []map[string]any{
				{"name": "config", "configMap": map[string]any{"name": "web-config", "defaultMode": 420}},
				{"name": "tls", "secret": map[string]any{"secretName": "web-tls", "defaultMode": 420}},
				{"name": "cache", "emptyDir": map[string]any{"sizeLimit": "1Gi"}},
				{"name": "proxy-certs", "secret": map[string]any{"secretName": "proxy-certs"}},
			},
		},
	}
	b, err := json.Marshal(pod)
	if err != nil {
		fail("encoding pod: %v", err)
	}
	return b
}

// setup creates the namespace and N Pods, each touched by three field managers (a server-side
// apply of the whole Pod, a strategic-merge label update, a status apply), so managedFields
// holds three entries as on a real cluster.
func setup(cs *kubernetes.Clientset, namespace string, n int) {
	ctx := context.Background()
	ensureNamespace(ctx, cs, namespace)
	// The owner must exist: the garbage collector deletes Pods whose owner is missing.
	owner := ownerReplicaSet(ctx, cs, namespace)
	force := true
	pods := cs.CoreV1().Pods(namespace)
	inParallel("setup", n, func(i int) error {
		name := fmt.Sprintf("bench-web-7d9f8b6c5-%05d", i)
		_, err := pods.Patch(ctx, name, types.ApplyPatchType, podApply(namespace, owner, i),
			metav1.PatchOptions{FieldManager: "bench-deployer", Force: &force})
		if err == nil {
			labels := fmt.Sprintf(`{"metadata":{"labels":{"topology.example.com/zone":"zone-%c","rollout.example.com/wave":"%d"},"annotations":{"rollout.example.com/started":"2026-11-21T08:15:00Z"}}}`, 'a'+rune(i%3), i%4)
			_, err = pods.Patch(ctx, name, types.StrategicMergePatchType, []byte(labels),
				metav1.PatchOptions{FieldManager: "bench-labeler"})
		}
		if err == nil {
			status := `{"apiVersion":"v1","kind":"Pod","status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/12 nodes are available: 12 node(s) didn't match Pod's node affinity/selector.","lastTransitionTime":"2026-11-21T08:15:02Z"}]}}`
			_, err = pods.Patch(ctx, name, types.ApplyPatchType, []byte(status),
				metav1.PatchOptions{FieldManager: "bench-scheduler", Force: &force}, "status")
		}
		if err != nil {
			return fmt.Errorf("pod %s: %w", name, err)
		}
		return nil
	})
}

// ensureNamespace creates the namespace unless it exists.
func ensureNamespace(ctx context.Context, cs *kubernetes.Clientset, namespace string) {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		fail("creating namespace: %v", err)
	}
}

// inParallel calls create for 0 to n-1 on 16 workers, and fails naming the step and the first
// error once all are done.
func inParallel(step string, n int, create func(i int) error) {
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := create(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		fail("%s: %v", step, firstErr)
	}
}

// ownerReplicaSet creates (or finds) the ReplicaSet the Pods name as their controller, scaled to
// zero (no controller runs on the test server anyway), and returns its UID.
func ownerReplicaSet(ctx context.Context, cs *kubernetes.Clientset, namespace string) string {
	zero := int32(0)
	// testenv runs the ReplicaSet controller: a ReplicaSet of 0 replicas deletes the Pods it
	// controls or can adopt. Its selector matches none of the Pods, and their owner reference is
	// not a controller reference, so it leaves them alone (and the garbage collector keeps them,
	// since their owner exists).
	labels := map[string]string{"kclient-bench": "owner-only"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d9f8b6c5", Namespace: namespace},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/storefront/web:1.24.3"}}},
			},
		},
	}
	created, err := cs.AppsV1().ReplicaSets(namespace).Create(ctx, rs, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = cs.AppsV1().ReplicaSets(namespace).Get(ctx, rs.Name, metav1.GetOptions{})
	}
	if err != nil {
		fail("owner ReplicaSet: %v", err)
	}
	return string(created.UID)
}

// cleanup deletes the Pods (at once: none is bound to a node) and the other kinds of the mixed
// fixture that can be deleted as a collection, then the namespace, and waits until the
// namespace is gone so that a following setup starts empty. Deleting 50,000 Pods outlasts one
// request's time limit, so a failed collection delete is reported and tried again every 30
// seconds while the namespace controller works; only the deadline fails the cleanup.
func cleanup(cs *kubernetes.Clientset, namespace string) {
	ctx := context.Background()
	zero := int64(0)
	all := metav1.ListOptions{}
	now := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	collections := map[string]func() error{
		"pods":        func() error { return cs.CoreV1().Pods(namespace).DeleteCollection(ctx, now, all) },
		"configmaps":  func() error { return cs.CoreV1().ConfigMaps(namespace).DeleteCollection(ctx, now, all) },
		"secrets":     func() error { return cs.CoreV1().Secrets(namespace).DeleteCollection(ctx, now, all) },
		"deployments": func() error { return cs.AppsV1().Deployments(namespace).DeleteCollection(ctx, now, all) },
		"replicasets": func() error { return cs.AppsV1().ReplicaSets(namespace).DeleteCollection(ctx, now, all) },
	}
	deleteCollections := func() {
		for resource, deleteAll := range collections {
			if err := deleteAll(); err != nil && !apierrors.IsNotFound(err) {
				fmt.Fprintf(os.Stderr, "bench: deleting %s in %s: %v (trying again while the namespace goes)\n", resource, namespace, err)
			}
		}
	}
	deleteCollections()
	err := cs.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		fail("deleting namespace: %v", err)
	}
	deadline := time.Now().Add(20 * time.Minute)
	lastSweep := time.Now()
	for {
		_, err := cs.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			fail("namespace %s still exists after 20 minutes (err: %v)", namespace, err)
		}
		if time.Since(lastSweep) > 30*time.Second {
			deleteCollections()
			lastSweep = time.Now()
		}
		time.Sleep(time.Second)
	}
}

// dump writes the namespace's PodList as the server sends it: JSON, or protobuf (the
// `k8s\x00` envelope) when asked.
func dump(namespace, out string, protobuf bool) {
	cfg := restConfig()
	if protobuf {
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	} else {
		cfg.AcceptContentTypes = "application/json"
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail("client: %v", err)
	}
	raw, err := cs.CoreV1().RESTClient().Get().Namespace(namespace).Resource("pods").DoRaw(context.Background())
	if err != nil {
		fail("listing pods: %v", err)
	}
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		fail("writing %s: %v", out, err)
	}
}

// heap returns the live heap after a full collection, and the number of heap allocations
// so far.
func heap() (uint64, uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.Mallocs
}

func informer(cs *kubernetes.Clientset, namespace string, transform, jsonWire bool) {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Pods().Informer()
	if transform {
		err := inf.SetTransform(func(obj any) (any, error) {
			if m, err := meta.Accessor(obj); err == nil {
				m.SetManagedFields(nil)
			}
			return obj, nil
		})
		if err != nil {
			fail("set transform: %v", err)
		}
	}
	mode := "informer"
	if transform {
		mode = "informer-transform"
	}
	client := "client-go"
	if jsonWire {
		client = "client-go (JSON)"
	}
	measure(client, mode, startable{
		start:    factory.Start,
		shutdown: factory.Shutdown,
	}, inf)
}

// metadataInformer is informer with client-go's metadata-only informer of the Pods.
func metadataInformer(namespace string) {
	mc, err := metadata.NewForConfig(restConfig())
	if err != nil {
		fail("metadata client: %v", err)
	}
	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, namespace, nil)
	inf := factory.ForResource(corev1.SchemeGroupVersion.WithResource("pods")).Informer()
	measure("client-go", "informer-metadata", startable{
		start:    factory.Start,
		shutdown: factory.Shutdown,
	}, inf)
}

// unscheduled is the schedulerName of every fixture Pod. No scheduler by this name runs, so
// testenv's kube-scheduler leaves the Pods alone. With the default scheduler it wrote each Pod's
// PodScheduled condition (a fourth field manager) and an event, in a stream that lasted minutes
// after setup at 50,000 Pods and loaded the server while the first informer runs synced.
const unscheduled = "kclient-bench-unscheduled"

// startable is what measure needs of an informer factory (the typed and the metadata factories
// have the same Start and Shutdown).
type startable struct {
	start    func(stop <-chan struct{})
	shutdown func()
}

// syncPollPeriod is how often measure looks whether the informers have synced: the resolution
// of the sync time, the same as bench/informer's.
const syncPollPeriod = 5 * time.Millisecond

// allSynced reports whether every informer has synced.
func allSynced(infs []cache.SharedIndexInformer) bool {
	for _, inf := range infs {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// measure starts the factory, waits for sync, and emits the heap it holds, the time it took,
// and the objects the informers cached.
func measure(client, mode string, factory startable, infs ...cache.SharedIndexInformer) {
	before, _ := heap()
	stop := make(chan struct{})
	start := time.Now()
	factory.start(stop)
	// Not factory.WaitForCacheSync, which looks every 100 ms: at 5,000 Pods a sync takes about
	// a second, so its steps were a tenth of the figure. bench/informer polls as often.
	for !allSynced(infs) {
		time.Sleep(syncPollPeriod)
	}
	syncSecs := time.Since(start).Seconds()
	// Let the first watch settle (buffers of the initial events are dropped), then measure.
	time.Sleep(500 * time.Millisecond)
	after, _ := heap()
	objects := 0
	for _, inf := range infs {
		objects += len(inf.GetStore().ListKeys())
	}
	emit(map[string]any{
		"client": client, "mode": mode, "objects": objects,
		"live_bytes": int64(after) - int64(before), "sync_seconds": syncSecs,
		"watch_list": clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient),
	})
	close(stop)
	factory.shutdown()
	runtime.KeepAlive(infs)
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

// decode times decoding of the PodList file with encoding/json and with the scheme's codec
// (what a client-go typed client uses), and reports the heap each decoded list holds.
func decode(file string, runs int) {
	data, err := os.ReadFile(file)
	if err != nil {
		fail("reading %s: %v", file, err)
	}
	codec := scheme.Codecs.UniversalDeserializer()
	decoders := []struct {
		name string
		fn   func() (int, error)
	}{
		{"encoding/json", func() (int, error) {
			var list corev1.PodList
			err := json.Unmarshal(data, &list)
			return len(list.Items), err
		}},
		{"client-go codec", func() (int, error) {
			var list corev1.PodList
			_, _, err := codec.Decode(data, nil, &list)
			return len(list.Items), err
		}},
	}
	for _, d := range decoders {
		secs := make([]float64, 0, runs)
		var objects int
		for r := 0; r < runs; r++ {
			start := time.Now()
			n, err := d.fn()
			secs = append(secs, time.Since(start).Seconds())
			if err != nil {
				fail("%s: %v", d.name, err)
			}
			objects = n
		}
		// Heap held by one decoded list.
		before, mallocs := heap()
		var list corev1.PodList
		if d.name == "encoding/json" {
			err = json.Unmarshal(data, &list)
		} else {
			_, _, err = codec.Decode(data, nil, &list)
		}
		if err != nil {
			fail("%s: %v", d.name, err)
		}
		after, mallocsAfter := heap()
		runtime.KeepAlive(&list)
		med := median(secs)
		emit(map[string]any{
			"client": "client-go", "mode": "decode", "decoder": d.name, "objects": objects,
			"json_bytes": len(data), "live_bytes": int64(after) - int64(before),
			"allocations": mallocsAfter - mallocs, "median_seconds": med, "bytes_per_second": float64(len(data)) / med,
		})
	}
}

// decodeProtobuf decodes a protobuf PodList (as dump -protobuf wrote it) with client-go's
// codec, the way its typed clients decode protobuf responses, and reports as decode does.
func decodeProtobuf(file string, runs int) {
	data, err := os.ReadFile(file)
	if err != nil {
		fail("reading %s: %v", file, err)
	}
	codec := scheme.Codecs.UniversalDeserializer()
	decodeOnce := func() (*corev1.PodList, error) {
		var list corev1.PodList
		_, _, err := codec.Decode(data, nil, &list)
		return &list, err
	}
	secs := make([]float64, 0, runs)
	var objects int
	for r := 0; r < runs; r++ {
		start := time.Now()
		list, err := decodeOnce()
		secs = append(secs, time.Since(start).Seconds())
		if err != nil {
			fail("protobuf decode: %v", err)
		}
		objects = len(list.Items)
	}
	before, mallocs := heap()
	list, err := decodeOnce()
	if err != nil {
		fail("protobuf decode: %v", err)
	}
	after, mallocsAfter := heap()
	runtime.KeepAlive(list)
	med := median(secs)
	emit(map[string]any{
		"client": "client-go", "mode": "decode", "decoder": "client-go codec (protobuf)", "objects": objects,
		"wire": "protobuf", "wire_bytes": len(data), "live_bytes": int64(after) - int64(before),
		"allocations": mallocsAfter - mallocs, "median_seconds": med, "bytes_per_second": float64(len(data)) / med,
	})
}

func emit(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail("encoding result: %v", err)
	}
	fmt.Println(string(b))
}
