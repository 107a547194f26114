package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/embed"
)

// compactOnSignal compacts etcd to its current revision each time the process receives
// SIGUSR1, so tests can make every older resourceVersion unavailable on demand (a watch from
// it then gets 410 Gone) instead of waiting for the apiserver's periodic compaction.
//
// It compacts the way the apiserver's own periodic compactor does: it first records the revision
// under the compact_rev_key key, which every apiserver watches to learn that older revisions are
// gone (the watch cache then drops its snapshots older than it, so a list continuing from an
// older resourceVersion gets 410 too), then compacts etcd to that revision.
//
// After each compaction it writes "<count> <revision>" to dir/compaction; tests wait for the
// count to grow.
func compactOnSignal(ctx context.Context, dir string, e *embed.Etcd) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	defer signal.Stop(sig)
	path := filepath.Join(dir, "compaction")
	// Continue the count of an earlier run on this data directory, so a waiter that read the
	// file before a restart still sees it grow.
	count := 0
	if b, err := os.ReadFile(path); err == nil {
		fmt.Sscanf(string(b), "%d", &count)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
		}
		rev := e.Server.KV().Rev()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := compact(cctx, e, rev)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: compacting etcd to revision %d: %v\n", rev, err)
			continue
		}
		count++
		if err := os.WriteFile(path, []byte(fmt.Sprintf("%d %d\n", count, rev)), 0o600); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		}
	}
}

// compact records rev as the compaction revision for the apiserver and compacts etcd to it.
func compact(ctx context.Context, e *embed.Etcd, rev int64) error {
	_, err := e.Server.Put(ctx, &etcdserverpb.PutRequest{Key: []byte("compact_rev_key"), Value: []byte(strconv.FormatInt(rev, 10))})
	if err != nil {
		return fmt.Errorf("recording the compaction revision: %w", err)
	}
	_, err = e.Server.Compact(ctx, &etcdserverpb.CompactionRequest{Revision: rev, Physical: true})
	return err
}
