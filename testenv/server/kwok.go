package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	kwokclient "sigs.k8s.io/kwok/pkg/client/clientset/versioned"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/kwok/controllers"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/client"
)

// The annotation that marks the nodes kwok manages (kwok's own convention).
const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
	// The first simulated node's name; further ones count up.
	nodeNamePrefix = "kwok-node-"
	// The pods' addresses: kwok hands them out of this range.
	podCIDR = "10.244.0.1/16"
)

// nodeName is the name of the i-th simulated node.
func nodeName(i int) string {
	return fmt.Sprintf("%s%d", nodeNamePrefix, i)
}

// ensureNodes creates the simulated nodes kwok-node-0 .. kwok-node-<count-1> that do not exist
// yet (a restart on the same data directory finds them). They carry no taint: the apiserver runs
// without the TaintNodesByCondition admission plugin, which would taint every new node
// "not-ready" until a node-lifecycle controller (not run here) removed it.
func ensureNodes(ctx context.Context, cs kubernetes.Interface, count int) error {
	for i := 0; i < count; i++ {
		name := nodeName(i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{kwokNodeAnnotation: kwokNodeValue},
				Labels: map[string]string{
					"kubernetes.io/hostname": name,
					"kubernetes.io/os":       "linux",
					"kubernetes.io/arch":     "amd64",
					"type":                   "kwok",
				},
			},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	return nil
}

// runKwok runs kwok's node and pod controllers until ctx ends. They manage the nodes annotated
// kwok.x-k8s.io/node=fake: nodes become Ready with 127.0.0.1 as their address and kubeletPort as
// their kubelet port (where the simulated kubelet serves exec, attach, logs and port-forward),
// pods bound to them become Running and Ready (pods of Jobs then Succeeded), and deleted pods go
// away. The stages are kwok's "fast" ones, given in-process: no kwok CRD is installed.
func runKwok(ctx context.Context, kubeconfig string, kubeletPort int, verbosity int) error {
	level := kwoklog.LevelWarn
	if verbosity > 0 {
		level = kwoklog.LevelInfo
	}
	ctx = kwoklog.NewContext(ctx, kwoklog.NewLogger(os.Stderr, level))

	stages := map[internalversion.StageResourceRef][]*internalversion.Stage{}
	for _, raw := range []string{nodefast.DefaultNodeInit, podfast.DefaultPodReady, podfast.DefaultPodComplete, podfast.DefaultPodDelete} {
		stage, err := kwokconfig.UnmarshalWithType[*internalversion.Stage](raw)
		if err != nil {
			return fmt.Errorf("kwok's default stages: %w", err)
		}
		ref := stage.Spec.ResourceRef
		stages[ref] = append(stages[ref], stage)
	}

	clientset, err := client.NewClientset("", kubeconfig)
	if err != nil {
		return err
	}
	restConfig, err := clientset.ToRESTConfig()
	if err != nil {
		return err
	}
	dynamicClient, err := clientset.ToDynamicClient()
	if err != nil {
		return err
	}
	restMapper, err := clientset.ToRESTMapper()
	if err != nil {
		return err
	}
	restClient, err := rest.RESTClientFor(restConfig)
	if err != nil {
		return err
	}
	typedClient, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	typedKwokClient, err := kwokclient.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	id, err := controllers.Identity()
	if err != nil {
		return err
	}
	ctr, err := controllers.NewController(controllers.Config{
		Clock:                             clock.RealClock{},
		DynamicClient:                     dynamicClient,
		RESTClient:                        restClient,
		RESTMapper:                        restMapper,
		ImpersonatingDynamicClient:        clientset.ToImpersonatingDynamicClient(),
		ImpersonatingTypedClient:          clientset.ToImpersonatingTypedClient(),
		TypedClient:                       typedClient,
		TypedKwokClient:                   typedKwokClient,
		ManageNodesWithAnnotationSelector: kwokNodeAnnotation + "=" + kwokNodeValue,
		CIDR:                              podCIDR,
		NodeIP:                            "127.0.0.1",
		NodePort:                          kubeletPort,
		LocalStages:                       stages,
		PodPlayStageParallelism:           4,
		NodePlayStageParallelism:          2,
		PodsOnNodeSyncParallelism:         2,
		ID:                                id,
	})
	if err != nil {
		return err
	}
	if err := ctr.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// startNodes creates the simulated nodes and starts what runs them: kwok's controllers and the
// simulated kubelet. It returns once the nodes exist; component runs each part until ctx ends.
func startNodes(ctx context.Context, dir string, st *state, kubeletListener net.Listener, pki *pkiFiles, ids *identities, count int, verbosity int, component func(string, func() error)) error {
	config, err := clientcmdConfig(ids.adminKubeconfig)
	if err != nil {
		_ = kubeletListener.Close()
		return err
	}
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		_ = kubeletListener.Close()
		return err
	}
	if err := ensureNodes(ctx, cs, count); err != nil {
		_ = kubeletListener.Close()
		return err
	}
	runtime := newContainerRuntime(filepath.Join(dir, "kubelet"))
	component("container runtime", func() error { runtime.run(ctx, cs); return nil })
	component("kubelet", func() error { return serveKubelet(ctx, kubeletListener, pki, &kubelet{runtime: runtime}) })
	component("kwok", func() error { return runKwok(ctx, ids.adminKubeconfig, st.KubeletPort, verbosity) })
	return nil
}

// clientcmdConfig loads a kubeconfig file.
func clientcmdConfig(path string) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", path)
}
