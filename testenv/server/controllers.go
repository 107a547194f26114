package main

import (
	"context"

	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
)

// runControllers runs kube-controller-manager's garbage-collector and namespace controllers
// in this process, so namespace deletion and ownerReference cascades complete.
//
// Options are set directly rather than parsed from flags: the apiserver has already
// registered the shared component registry's flags and feature gates.
func runControllers(ctx context.Context, kubeconfig string) error {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return err
	}
	s.Generic.ClientConnection.Kubeconfig = kubeconfig
	s.Generic.Controllers = []string{names.GarbageCollectorController, names.NamespaceController}
	s.Generic.LeaderElection.LeaderElect = false
	// No serving endpoint: nothing scrapes it here, and it would need delegated auth.
	s.SecureServing.BindPort = 0
	s.SecureServing.Listener = nil
	c, err := s.Config(ctx, kcm.KnownControllers(), kcm.ControllersDisabledByDefault(), kcm.ControllerAliases())
	if err != nil {
		return err
	}
	return kcm.Run(ctx, c.Complete())
}
