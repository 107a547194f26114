package main

import (
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEtcd starts an embedded etcd on loopback, keeping its data under dir/etcd.
func startEtcd(dir string, st *state) (*embed.Etcd, error) {
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
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("not ready after 60s")
	}
}
