package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// runScheduler runs kube-scheduler in this process until ctx ends: it binds pending pods to the
// simulated nodes, with the default profile (so node selectors, affinity, taints, resources and
// topology spread behave as on a cluster).
//
// Only the flags named here are parsed; the shared component registry's feature gates and the
// logging options were set up by the apiserver already. Leader election is off (one scheduler)
// and there is no serving endpoint (nothing scrapes it, and it would need delegated auth).
func runScheduler(ctx context.Context, kubeconfig string) error {
	opts := scheduleroptions.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, name := range []string{"misc", "secure serving", "deprecated", "leader election"} {
		fs.AddFlagSet(opts.Flags.FlagSet(name))
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("flags: %w", err)
	}
	cc, sched, err := schedulerapp.Setup(ctx, opts)
	if err != nil {
		return err
	}
	return schedulerapp.Run(ctx, cc, sched)
}
