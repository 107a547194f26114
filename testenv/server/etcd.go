package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/embed"
)

// etcdPortAttempts is how many times startEtcd tries fresh ports when another process took one
// of etcd's ports in the moment between their pick and etcd's bind.
const etcdPortAttempts = 5

// startEtcd starts an embedded etcd on loopback on the state's etcd ports, keeping its data
// under dir/etcd. It closes the ports' listeners (ls) just before etcd binds the ports; should
// another process take one in that moment, it starts etcd on fresh ports (saved in the state).
func startEtcd(dir string, st *state, ls *listeners) (*embed.Etcd, error) {
	for attempt := 1; ; attempt++ {
		ls.closeEtcd()
		if attempt == 1 {
			takePickedPorts(st)
		}
		e, err := startEtcdOnce(dir, st)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || attempt == etcdPortAttempts {
			return e, err
		}
		fmt.Fprintf(os.Stderr, "testenv: an etcd port was taken by another process (%v); starting etcd on fresh ports\n", err)
		var client, peer net.Listener
		if client, st.EtcdClientPort, err = listenFree(); err != nil {
			return nil, err
		}
		ls.etcdClient = client
		if peer, st.EtcdPeerPort, err = listenFree(); err != nil {
			return nil, err
		}
		ls.etcdPeer = peer
		if err := st.save(dir); err != nil {
			return nil, err
		}
	}
}

// startEtcdOnce starts etcd on the state's etcd ports.
func startEtcdOnce(dir string, st *state) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "testenv"
	cfg.Dir = filepath.Join(dir, "etcd")
	client, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", st.EtcdClientPort))
	peer, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", st.EtcdPeerPort))
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peer.String())
	cfg.LogLevel = "error"
	// Tests value speed over durability across power loss.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		if err := seedRevision(e); err != nil {
			e.Close()
			return nil, fmt.Errorf("seeding the revision: %w", err)
		}
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("not ready after 60s")
	}
}

// seedRevision moves a fresh etcd past revision 1 before the apiserver starts.
//
// The apiserver's watch cache serves a watch from any resourceVersion at or after the revision of
// its initial list. On an empty etcd that list happens at revision 1, so "watch from
// resourceVersion 1" would be served (not answered 410 Gone) until the cache's event window fills
// up, which on a test server takes minutes or never happens. With the revision past 1 before the
// caches start, resourceVersion 1 is too old for every watch cache from the first request on, as it
// is on any real cluster. The key lies outside the apiserver's /registry prefix.
func seedRevision(e *embed.Etcd) error {
	const minRevision = 10
	for e.Server.KV().Rev() < minRevision {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := e.Server.Put(ctx, &etcdserverpb.PutRequest{Key: []byte("/kclient-testenv/seed"), Value: []byte("seed")})
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}
