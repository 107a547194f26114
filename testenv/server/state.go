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

// startLockFileName is the lock kclient-testenv holds in a data directory from before it
// writes there (its log) until the server it starts is ready (holds lockFileName) or gone, and
// that it writes the pid of that server in. A testenv run without --start-claimed (by
// `scripts/testenv up`, or by hand) takes it too while it takes lockFileName, so that it does
// not take the directory from under such a start, nor fail because such a start checks
// lockFileName at that moment: whoever takes this lock first wins, and the other one fails
// at once saying the directory is in use.
const startLockFileName = "testenv.start.lock"

// lockDataDir takes the data directory for this process, before anything in it is read or
// written: a second testenv on the same directory would rewrite the ports and kubeconfigs of
// the running one and then wait, silently, for etcd's lock on its database. The lock is the
// system's (flock), so it goes with the process however it ends; the file holds the pid for
// the message of the next one. Unless startClaimed (the caller, kclient-testenv, holds the
// start lock for this process), the start lock is taken first and released once the
// directory's lock is held.
func lockDataDir(dir string, startClaimed bool) (*os.File, error) {
	if !startClaimed {
		claim, err := flockPidFile(dir, startLockFileName, "a start of kclient-testenv")
		if err != nil {
			return nil, err
		}
		defer claim.Close()
	}
	return flockPidFile(dir, lockFileName, "another testenv")
}

// flockPidFile takes the lock file name in dir (flock, not waiting) and writes this process's
// pid in it. When another process holds it, the error says the directory is in use by holder
// and the pid the file names (by another process when it names none).
func flockPidFile(dir, name, holder string) (*os.File, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		_ = f.Close()
		if err == syscall.EWOULDBLOCK {
			by := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				by = fmt.Sprintf("%s (pid %d)", holder, pid)
			}
			return nil, fmt.Errorf("the data directory %s is in use by %s; stop it or use another data directory", dir, by)
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

// listeners are the listeners of the ports in a state, bound when the ports are picked (or
// read back from a restart's state) so that no other process can take a port between its pick
// and its use: a port picked by binding it and closing the listener again, as before, was
// free only at that moment, and parallel servers (or outgoing connections given it as their
// ephemeral port) took one now and then, failing a start with "address already in use".
//
// The apiserver and the kubelet are handed theirs. etcd cannot be (embed binds its own), so
// startEtcd closes the etcd ones just before etcd binds the ports, and starts it again on fresh
// ones if another process took one in that moment.
type listeners struct {
	api, kubelet, etcdClient, etcdPeer net.Listener
}

// closeEtcd closes the etcd ports' listeners, for etcd to bind the ports.
func (l *listeners) closeEtcd() {
	for _, p := range []*net.Listener{&l.etcdClient, &l.etcdPeer} {
		if *p != nil {
			_ = (*p).Close()
			*p = nil
		}
	}
}

// close closes every listener not handed over yet.
func (l *listeners) close() {
	l.closeEtcd()
	for _, p := range []*net.Listener{&l.api, &l.kubelet} {
		if *p != nil {
			_ = (*p).Close()
			*p = nil
		}
	}
}

// loadOrCreateState reads dir/state.json, or starts a new state, and binds its ports. A non-zero
// port is the apiserver's port and must be free; other ports that are taken are replaced by
// free ones.
func loadOrCreateState(dir string, port int) (*state, *listeners, error) {
	path := filepath.Join(dir, "state.json")
	st := &state{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, st); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	} else if !os.IsNotExist(err) {
		return nil, nil, err
	}
	ls := &listeners{}
	if port != 0 {
		l, err := listenPort(port)
		if err != nil {
			// kclient-testenv recognises this message (server_process.rs).
			return nil, nil, fmt.Errorf("port %d on 127.0.0.1 is in use: choose another port or let testenv pick a free one", port)
		}
		ls.api, st.APIPort = l, port
	}
	for _, p := range []struct {
		port *int
		l    *net.Listener
	}{{&st.APIPort, &ls.api}, {&st.EtcdClientPort, &ls.etcdClient}, {&st.EtcdPeerPort, &ls.etcdPeer}, {&st.KubeletPort, &ls.kubelet}} {
		if *p.l != nil {
			continue
		}
		var err error
		if *p.port != 0 {
			// The port of the previous run, unless another process has it now.
			*p.l, err = listenPort(*p.port)
		}
		if *p.port == 0 || err != nil {
			if *p.l, *p.port, err = listenFree(); err != nil {
				ls.close()
				return nil, nil, err
			}
		}
	}
	if st.AdminToken == "" {
		st.AdminToken = randomToken()
	}
	if st.RestrictedToken == "" {
		st.RestrictedToken = randomToken()
	}
	if err := st.save(dir); err != nil {
		ls.close()
		return nil, nil, err
	}
	return st, ls, nil
}

// save writes the state to dir/state.json.
func (st *state) save(dir string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "state.json"), b, 0o600)
}

// listenFree binds a free port on 127.0.0.1.
func listenFree() (net.Listener, int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	return l, l.Addr().(*net.TCPAddr).Port, nil
}

// listenPort binds port on 127.0.0.1.
func listenPort(port int) (net.Listener, error) {
	return net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// takePickedPortsEnv names the test hook takePickedPorts: kclient-testenv's tests set it to 1.
const takePickedPortsEnv = "KCLIENT_TESTENV_TEST_TAKE_PICKED_PORTS"

// takenPorts holds the ports takePickedPorts took, for the life of the process.
var takenPorts []net.Listener

// takePickedPorts is a test hook, run between the pick of the ports and their use when
// KCLIENT_TESTENV_TEST_TAKE_PICKED_PORTS=1: it binds every picked port it can, as another
// process on the machine could (a parallel server, or an outgoing connection given it as its
// ephemeral port), and holds it, saying which on stderr. A server must still start.
func takePickedPorts(st *state) {
	if os.Getenv(takePickedPortsEnv) != "1" {
		return
	}
	for _, p := range []struct {
		name string
		port int
	}{{"apiserver", st.APIPort}, {"etcd client", st.EtcdClientPort}, {"etcd peer", st.EtcdPeerPort}, {"kubelet", st.KubeletPort}} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: test hook: could not take the %s port %d\n", p.name, p.port)
			continue
		}
		takenPorts = append(takenPorts, l)
		fmt.Fprintf(os.Stderr, "testenv: test hook: took the %s port %d\n", p.name, p.port)
	}
}
