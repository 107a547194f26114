package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFileName is the lock a running testenv holds in its data directory. kclient-testenv
// checks it too, before it starts a server on a directory.
const lockFileName = "testenv.lock"

// lockDataDir takes the data directory for this process, before anything in it is read or
// written: a second testenv on the same directory would rewrite the ports and kubeconfigs of
// the running one and then wait, silently, for etcd's lock on its database. The lock is the
// system's (flock), so it goes with the process however it ends; the file holds the pid for
// the message of the next one.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		_ = f.Close()
		if err == syscall.EWOULDBLOCK {
			holder := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf("another testenv (pid %d)", pid)
			}
			return nil, fmt.Errorf("the data directory %s is in use by %s; stop it or use another data directory", dir, holder)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// state is what a restart on the same data directory must reuse: ports (so kubeconfigs stay
// valid) and the identities' tokens.
type state struct {
	APIPort         int    `json:"apiPort"`
	EtcdClientPort  int    `json:"etcdClientPort"`
	EtcdPeerPort    int    `json:"etcdPeerPort"`
	KubeletPort     int    `json:"kubeletPort"`
	AdminToken      string `json:"adminToken"`
	RestrictedToken string `json:"restrictedToken"`
}

// loadOrCreateState reads dir/state.json, or starts a new state. A non-zero port is the
// apiserver's port and must be free; other ports that are taken are replaced by free ones.
func loadOrCreateState(dir string, port int) (*state, error) {
	path := filepath.Join(dir, "state.json")
	st := &state{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, st); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	var err error
	if port != 0 {
		if !portFree(port) {
			return nil, fmt.Errorf("port %d on 127.0.0.1 is in use: choose another port or let testenv pick a free one", port)
		}
		st.APIPort = port
	}
	for _, p := range []*int{&st.APIPort, &st.EtcdClientPort, &st.EtcdPeerPort, &st.KubeletPort} {
		if *p == 0 || !portFree(*p) {
			if *p, err = freePort(); err != nil {
				return nil, err
			}
		}
	}
	if st.AdminToken == "" {
		st.AdminToken = randomToken()
	}
	if st.RestrictedToken == "" {
		st.RestrictedToken = randomToken()
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	return st, os.WriteFile(path, b, 0o600)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
