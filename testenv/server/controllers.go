package main

import (
	"context"

	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
)

// runControllers runs, in this process, the kube-controller-manager controllers that finish what
// tests start. The workload controllers (deployment, replicaset, statefulset, daemonset, job,
// cronjob) create the pods that the scheduler binds and kwok runs; the endpointslice controller
// follows Services; the serviceaccount controller gives every namespace its "default"
// ServiceAccount, and the serviceaccount-token controller fills the token Secrets asked for
// explicitly (it signs with the apiserver's service-account key). Besides those: the garbage collector (ownerReference cascades), the namespace controller
// (namespace deletion), the pod garbage collector (force-deletes pods bound to nodes that do not
// exist, as a cluster does; without a kubelet a deleted bound pod would otherwise stay forever)
// and the PVC and PV protection controllers (they remove the kubernetes.io/pvc-protection and
// pv-protection finalizers that admission adds, once nothing uses the volume). Without the last
// three, a namespace holding a bound pod or a claim stays Terminating, and the namespace
// controller keeps re-listing every resource in it.
//
// Options are set directly rather than parsed from flags: the apiserver has already
// registered the shared component registry's flags and feature gates.
func runControllers(ctx context.Context, kubeconfig string, pki *pkiFiles) error {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return err
	}
	s.Generic.ClientConnection.Kubeconfig = kubeconfig
	s.Generic.Controllers = []string{
		names.GarbageCollectorController,
		names.NamespaceController,
		names.PodGarbageCollectorController,
		names.PersistentVolumeClaimProtectionController,
		names.PersistentVolumeProtectionController,
		names.DeploymentController,
		names.ReplicaSetController,
		names.StatefulSetController,
		names.DaemonSetController,
		names.JobController,
		names.CronJobController,
		names.EndpointSliceController,
		names.ServiceAccountController,
		names.ServiceAccountTokenController,
	}
	s.SAController.ServiceAccountKeyFile = pki.saKey
	s.SAController.RootCAFile = pki.caCert
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
