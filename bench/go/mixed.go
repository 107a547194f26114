// The mixed-kinds fixture: ConfigMaps, Secrets, Services, Deployments and Pods in one
// namespace, each object with its own labels, annotations and optional fields. The uniform Pod
// fixture is interning's best case (every Pod repeats the same keys and most of the same
// values); this one is not. Values that a real cluster repeats (label keys, images, env
// names) come from small pools, values it does not (hashes, release names, config data, the
// last-applied-configuration annotation) are unique per object.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// mixedKinds is the number of kinds in the fixture; object i is of kind i % mixedKinds.
const mixedKinds = 5

// Pools of values a real cluster repeats across objects.
var (
	mixedApps     = []string{"checkout", "cart", "catalog", "search", "payments", "auth", "gateway", "mailer", "reports", "billing", "inventory", "recommendations"}
	mixedTeams    = []string{"platform", "storefront", "data", "identity", "growth", "sre"}
	mixedEnvs     = []string{"production", "staging", "canary"}
	mixedManagers = []string{"kubectl-client-side-apply", "helm", "argocd-controller", "kustomize-controller", "terraform-provider-kubernetes"}
	mixedImages   = []string{"registry.example.com/shop/%s:%d.%d.%d", "ghcr.io/example/%s:v%d.%d.%d", "docker.io/library/%s:%d.%d.%d-alpine"}
	mixedEnvNames = []string{"LOG_LEVEL", "LOG_FORMAT", "HTTP_PORT", "GRPC_PORT", "OTEL_EXPORTER_OTLP_ENDPOINT", "FEATURE_FLAGS", "CACHE_TTL", "REGION", "DATABASE_HOST", "DATABASE_NAME", "QUEUE_URL", "MAX_CONNECTIONS"}
	mixedWords    = []string{"alpha", "bravo", "cache", "delta", "edge", "flux", "grid", "hub", "index", "jet", "kilo", "lumen", "mesh", "node", "orbit", "pulse", "quota", "relay", "shard", "tide"}
)

// mixedMeta is the metadata of object i: a few labels from a pool of keys, some of them with
// values unique to the object, and annotations of which several are unique (a checksum, a
// description, and for objects "applied with kubectl" the whole last-applied configuration).
func mixedMeta(r *rand.Rand, kind string, i int) (metav1.ObjectMeta, string) {
	app := mixedApps[r.IntN(len(mixedApps))]
	name := fmt.Sprintf("%s-%s-%05d", app, kind, i)
	labels := map[string]string{"app.kubernetes.io/name": app}
	optional := []struct{ key, value string }{
		{"app.kubernetes.io/instance", fmt.Sprintf("%s-%s", app, mixedEnvs[r.IntN(len(mixedEnvs))])},
		{"app.kubernetes.io/version", fmt.Sprintf("%d.%d.%d", r.IntN(4), r.IntN(30), r.IntN(12))},
		{"app.kubernetes.io/managed-by", mixedManagers[r.IntN(len(mixedManagers))]},
		{"team", mixedTeams[r.IntN(len(mixedTeams))]},
		{"environment", mixedEnvs[r.IntN(len(mixedEnvs))]},
		{"release", fmt.Sprintf("%s-%d", app, r.IntN(5000))},
		{"helm.sh/chart", fmt.Sprintf("%s-%d.%d.%d", app, r.IntN(3), r.IntN(20), r.IntN(10))},
		{"cost-center", fmt.Sprintf("cc-%04d", r.IntN(300))},
		{"tier", []string{"frontend", "backend", "worker", "cache"}[r.IntN(4)]},
		{"git-sha", fmt.Sprintf("%010x", r.Uint64()&0xffffffffff)},
		{"tenant", fmt.Sprintf("tenant-%d", r.IntN(800))},
		{fmt.Sprintf("feature.example.com/%s", mixedWords[r.IntN(len(mixedWords))]), "enabled"},
	}
	for _, l := range optional {
		if r.IntN(100) < 45 {
			labels[l.key] = l.value
		}
	}
	annotations := map[string]string{}
	if r.IntN(100) < 60 {
		annotations["checksum/config"] = fmt.Sprintf("%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())
	}
	if r.IntN(100) < 35 {
		annotations["description"] = fmt.Sprintf("%s %s for %s, ticket OPS-%d: %s %s %s", kind, name, mixedTeams[r.IntN(len(mixedTeams))], r.IntN(100000),
			mixedWords[r.IntN(len(mixedWords))], mixedWords[r.IntN(len(mixedWords))], mixedWords[r.IntN(len(mixedWords))])
	}
	if r.IntN(100) < 30 {
		annotations["meta.helm.sh/release-name"] = labels["release"] + app
		annotations["meta.helm.sh/release-namespace"] = "default"
	}
	if r.IntN(100) < 20 {
		annotations["kubectl.kubernetes.io/restartedAt"] = fmt.Sprintf("2026-11-%02dT%02d:%02d:%02dZ", 1+r.IntN(25), r.IntN(24), r.IntN(60), r.IntN(60))
	}
	manager := mixedManagers[r.IntN(len(mixedManagers))]
	return metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}, manager
}

// lastApplied gives a third of the objects kubectl's last-applied-configuration annotation,
// which repeats the object's own JSON and so is unique and large.
func lastApplied(r *rand.Rand, meta *metav1.ObjectMeta, obj any) {
	if r.IntN(100) >= 33 {
		return
	}
	b, err := json.Marshal(obj)
	if err != nil {
		fail("encoding last-applied-configuration: %v", err)
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = string(b)
}

func mixedText(r *rand.Rand, n int) string {
	b := make([]byte, 0, n)
	for len(b) < n {
		b = append(b, mixedWords[r.IntN(len(mixedWords))]...)
		b = append(b, []byte{' ', '=', '\n', ':'}[r.IntN(4)])
	}
	return string(b[:n])
}

func mixedImage(r *rand.Rand, app string) string {
	return fmt.Sprintf(mixedImages[r.IntN(len(mixedImages))], app, r.IntN(3), r.IntN(40), r.IntN(10))
}

// mixedContainer is a container of the fixture; the index keeps port names and numbers
// distinct within a Pod.
func mixedContainer(r *rand.Rand, index int, name, app string) corev1.Container {
	c := corev1.Container{Name: name, Image: mixedImage(r, app)}
	for _, k := range r.Perm(len(mixedEnvNames))[:r.IntN(len(mixedEnvNames))] {
		c.Env = append(c.Env, corev1.EnvVar{Name: mixedEnvNames[k], Value: fmt.Sprintf("%s-%d", mixedWords[r.IntN(len(mixedWords))], r.IntN(1000))})
	}
	if r.IntN(2) == 0 {
		c.Args = []string{fmt.Sprintf("--port=%d", 8000+r.IntN(100)), "--log-format=json"}
	}
	if r.IntN(3) > 0 {
		c.Ports = []corev1.ContainerPort{{Name: []string{"http", "admin", "metrics"}[index], ContainerPort: int32(8000 + 100*index + r.IntN(100)), Protocol: corev1.ProtocolTCP}}
	}
	if r.IntN(3) > 0 {
		c.Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", 50*(1+r.IntN(10)))),
				corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 64*(1+r.IntN(8)))),
			},
		}
	}
	if r.IntN(2) == 0 {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
			PeriodSeconds: int32(5 + r.IntN(10)),
		}
	}
	return c
}

func mixedPodSpec(r *rand.Rand, app string) corev1.PodSpec {
	spec := corev1.PodSpec{
		// No scheduler by this name runs and no node carries this pool, so the Pods stay
		// Pending and nothing writes to them after setup.
		SchedulerName: unscheduled,
		NodeSelector:  map[string]string{"node.kubernetes.io/pool": mixedWords[r.IntN(len(mixedWords))]},
	}
	for c := 0; c < 1+r.IntN(3); c++ {
		name := app
		if c > 0 {
			name = fmt.Sprintf("%s-sidecar-%d", mixedWords[r.IntN(len(mixedWords))], c)
		}
		spec.Containers = append(spec.Containers, mixedContainer(r, c, name, app))
	}
	if r.IntN(4) == 0 {
		// Init containers have no probes and no ports of their own here.
		migrate := mixedContainer(r, 0, "migrate", app)
		migrate.ReadinessProbe, migrate.Ports = nil, nil
		spec.InitContainers = []corev1.Container{migrate}
	}
	if r.IntN(3) == 0 {
		spec.ServiceAccountName = app
	}
	if r.IntN(3) == 0 {
		spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: mixedTeams[r.IntN(len(mixedTeams))], Effect: corev1.TaintEffectNoSchedule}}
	}
	if r.IntN(4) == 0 {
		spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}}}
		spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + app, ReadOnly: true}}
	}
	return spec
}

// createMixed creates object i of the mixed fixture.
func createMixed(ctx context.Context, cs *kubernetes.Clientset, namespace string, i int) error {
	r := rand.New(rand.NewPCG(uint64(i), 0x6b636c69656e74))
	switch i % mixedKinds {
	case 0:
		meta, manager := mixedMeta(r, "config", i)
		cm := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{}}
		for k := 0; k < 1+r.IntN(6); k++ {
			cm.Data[fmt.Sprintf("%s.%s", mixedWords[r.IntN(len(mixedWords))], []string{"yaml", "json", "conf", "properties"}[r.IntN(4)])] = mixedText(r, 20+r.IntN(1500))
		}
		lastApplied(r, &cm.ObjectMeta, cm)
		_, err := cs.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: manager})
		return err
	case 1:
		meta, manager := mixedMeta(r, "secret", i)
		s := &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
		for k := 0; k < 1+r.IntN(4); k++ {
			v := make([]byte, 16+r.IntN(1200))
			for j := range v {
				v[j] = byte(r.Uint32())
			}
			s.Data[fmt.Sprintf("%s-%s", mixedWords[r.IntN(len(mixedWords))], []string{"key", "token", "password", "cert"}[r.IntN(4)])] = v
		}
		_, err := cs.CoreV1().Secrets(namespace).Create(ctx, s, metav1.CreateOptions{FieldManager: manager})
		return err
	case 2:
		meta, manager := mixedMeta(r, "svc", i)
		svc := &corev1.Service{ObjectMeta: meta}
		if r.IntN(5) == 0 {
			// No cluster IP either way, so the fixture never runs out of service addresses.
			svc.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: fmt.Sprintf("%s.%s.example.com", meta.Labels["app.kubernetes.io/name"], mixedWords[r.IntN(len(mixedWords))])}
		} else {
			svc.Spec = corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app.kubernetes.io/name": meta.Labels["app.kubernetes.io/name"]}}
			for p := 0; p < 1+r.IntN(4); p++ {
				svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
					Name: []string{"http", "grpc", "metrics", "admin"}[p], Port: int32(80 + 1000*p), TargetPort: intstr.FromInt32(int32(8000 + r.IntN(100) + 100*p)),
				})
			}
		}
		lastApplied(r, &svc.ObjectMeta, svc)
		_, err := cs.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{FieldManager: manager})
		return err
	case 3:
		meta, manager := mixedMeta(r, "deploy", i)
		app := meta.Labels["app.kubernetes.io/name"]
		selector := map[string]string{"app.kubernetes.io/name": app, "instance": meta.Name}
		zero := int32(0)
		d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			// Zero replicas: the test server's controllers make a ReplicaSet but no Pods.
			Replicas: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: selector}, Spec: mixedPodSpec(r, app)},
		}}
		if r.IntN(2) == 0 {
			limit := int32(2 + r.IntN(10))
			d.Spec.RevisionHistoryLimit = &limit
		}
		lastApplied(r, &d.ObjectMeta, d)
		_, err := cs.AppsV1().Deployments(namespace).Create(ctx, d, metav1.CreateOptions{FieldManager: manager})
		return err
	default:
		meta, manager := mixedMeta(r, "pod", i)
		pod := &corev1.Pod{ObjectMeta: meta, Spec: mixedPodSpec(r, meta.Labels["app.kubernetes.io/name"])}
		lastApplied(r, &pod.ObjectMeta, pod)
		_, err := cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: manager})
		return err
	}
}

// setupMixed creates the namespace and N objects of the mixed fixture.
func setupMixed(cs *kubernetes.Clientset, namespace string, n int) {
	ctx := context.Background()
	ensureNamespace(ctx, cs, namespace)
	inParallel("setup-mixed", n, func(i int) error {
		if err := createMixed(ctx, cs, namespace, i); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("object %d: %w", i, err)
		}
		return nil
	})
}

// mixedInformer is informer over the mixed fixture: one informer per kind from one factory,
// measured together.
func mixedInformer(cs *kubernetes.Clientset, namespace string, jsonWire bool) {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	all := []cache.SharedIndexInformer{
		factory.Core().V1().ConfigMaps().Informer(),
		factory.Core().V1().Secrets().Informer(),
		factory.Core().V1().Services().Informer(),
		factory.Apps().V1().Deployments().Informer(),
		factory.Core().V1().Pods().Informer(),
	}
	client := "client-go"
	if jsonWire {
		client = "client-go (JSON)"
	}
	measure(client, "informer-mixed", startable{
		start:    factory.Start,
		shutdown: factory.Shutdown,
	}, all...)
}
