package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// identities are the users tests connect as, each with its own kubeconfig.
type identities struct {
	tokenFile            string
	adminKubeconfig      string // token of user "kclient-admin", group system:masters
	restrictedKubeconfig string // token of user "kclient-restricted", no RBAC grants
	certKubeconfig       string // client certificate "kclient-cert-user", group system:masters
}

func ensureIdentities(dir string, st *state, pki *pkiFiles) (*identities, error) {
	ids := &identities{
		tokenFile:            filepath.Join(dir, "pki", "tokens.csv"),
		adminKubeconfig:      filepath.Join(dir, "admin.kubeconfig"),
		restrictedKubeconfig: filepath.Join(dir, "restricted.kubeconfig"),
		certKubeconfig:       filepath.Join(dir, "cert.kubeconfig"),
	}
	tokens := fmt.Sprintf("%s,kclient-admin,kclient-admin-uid,\"system:masters\"\n%s,kclient-restricted,kclient-restricted-uid,\"kclient:restricted\"\n",
		st.AdminToken, st.RestrictedToken)
	if err := os.WriteFile(ids.tokenFile, []byte(tokens), 0o600); err != nil {
		return nil, err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", st.APIPort)
	ca := base64.StdEncoding.EncodeToString(pki.caPEM)
	write := func(path, name, user string) error {
		doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
%s
contexts:
- name: %s
  context:
    cluster: testenv
    user: %s
    namespace: default
current-context: %s
`, server, ca, name, user, name, name, name)
		return os.WriteFile(path, []byte(doc), 0o600)
	}
	if err := write(ids.adminKubeconfig, "kclient-admin", "    token: "+st.AdminToken); err != nil {
		return nil, err
	}
	if err := write(ids.restrictedKubeconfig, "kclient-restricted", "    token: "+st.RestrictedToken); err != nil {
		return nil, err
	}
	certUser := fmt.Sprintf("    client-certificate: %s\n    client-key: %s", pki.clientCert, pki.clientKey)
	if err := write(ids.certKubeconfig, "kclient-cert-user", certUser); err != nil {
		return nil, err
	}
	return ids, nil
}
