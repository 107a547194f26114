package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// runAPIServer runs kube-apiserver on listener (bound to st.APIPort) until ctx ends.
func runAPIServer(ctx context.Context, dir string, st *state, listener net.Listener, pki *pkiFiles, ids *identities, compaction time.Duration, verbosity int, runtimeConfig string) error {
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	args := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", st.APIPort),
		"--cert-dir=" + filepath.Join(dir, "pki", "generated"),
		"--tls-cert-file=" + pki.servingCert,
		"--tls-private-key-file=" + pki.servKey,
		"--client-ca-file=" + pki.caCert,
		"--token-auth-file=" + ids.tokenFile,
		"--authorization-mode=RBAC",
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", st.EtcdClientPort),
		"--etcd-compaction-interval=" + compaction.String(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.saKey,
		"--service-account-signing-key-file=" + pki.saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--endpoint-reconciler-type=none",
		// ServiceAccount: pods get no token volume (nothing in a simulated pod reads it).
		// TaintNodesByCondition: it taints every new node not-ready, and only the node-lifecycle
		// controller (not run here) would remove the taint, so no pod would ever be scheduled.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		// The simulated nodes' addresses: 127.0.0.1 (their Hostname does not resolve).
		"--kubelet-preferred-address-types=InternalIP",
		// The simulated kubelet serves with the testenv CA's certificate and accepts only
		// clients with a certificate of that CA.
		"--kubelet-certificate-authority=" + pki.caCert,
		"--kubelet-client-certificate=" + pki.clientCert,
		"--kubelet-client-key=" + pki.clientKey,
		"--allow-privileged=true",
		"--profiling=false",
	}
	if runtimeConfig != "" {
		args = append(args, "--runtime-config="+runtimeConfig)
	}
	if err := fs.Parse(args); err != nil {
		_ = listener.Close()
		return fmt.Errorf("flags: %w", err)
	}
	// Bound since the port was picked (see listeners): it serves on this one rather than
	// binding --secure-port itself.
	s.SecureServing.Listener = listener
	registry := s.GenericServerRunOptions.ComponentGlobalsRegistry
	if err := registry.Set(); err != nil {
		return err
	}
	featureGate := registry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	s.Logs.Verbosity = logsapi.VerbosityLevel(verbosity)
	if err := logsapi.ValidateAndApply(s.Logs, featureGate.(featuregate.FeatureGate)); err != nil {
		return err
	}
	completed, err := s.Complete(ctx)
	if err != nil {
		return err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return utilerrors.NewAggregate(errs)
	}
	return app.Run(ctx, completed)
}

// waitReady polls /readyz as the admin until it answers ok, the apiserver fails, or ctx ends.
func waitReady(ctx context.Context, st *state, pki *pkiFiles, ids *identities, apiErr <-chan error) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pki.caPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", st.APIPort)
	deadline := time.After(3 * time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+st.AdminToken)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-apiErr:
			if err == nil {
				err = fmt.Errorf("exited before it was ready")
			}
			return fmt.Errorf("kube-apiserver: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("kube-apiserver not ready after 3 minutes")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
