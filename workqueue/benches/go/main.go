// Command workqueue-bench runs the same add/get/done cycle and add_after measurements as
// ../throughput.rs against client-go's util/workqueue, so that kclient's figures can be read
// as ratios to client-go's. Run: `cd workqueue/benches/go && go run .`
package main

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
)

const (
	keys   = 10000
	rounds = 20
	runs   = 5
)

func cycle(workers int) time.Duration {
	q := workqueue.NewTyped[uint32]()
	passes := make([]atomic.Uint32, keys)
	var remaining atomic.Int64
	remaining.Store(keys)
	for k := uint32(0); k < keys; k++ {
		q.Add(k)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				pass := passes[key].Add(1)
				q.Done(key)
				if pass < rounds {
					q.Add(key)
				} else if remaining.Add(-1) == 0 {
					q.ShutDown()
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start) / (keys * rounds)
}

type rng uint64

func (r *rng) next() uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r)
}

func contended(producers, workers int) (time.Duration, int64) {
	const addsPerProducer = 100000
	q := workqueue.NewTyped[uint32]()
	var processed atomic.Int64
	var consumers sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				processed.Add(1)
				q.Done(key)
			}
		}()
	}
	var adders sync.WaitGroup
	for p := 0; p < producers; p++ {
		adders.Add(1)
		go func(p int) {
			defer adders.Done()
			r := rng(uint64(p)*7919 + 17)
			for i := 0; i < addsPerProducer; i++ {
				q.Add(uint32(r.next() % keys))
			}
		}(p)
	}
	adders.Wait()
	q.ShutDown()
	consumers.Wait()
	return time.Since(start) / time.Duration(producers*addsPerProducer), processed.Load()
}

func addAfterRandom(maxDelay time.Duration) (time.Duration, time.Duration, time.Duration, time.Duration) {
	q := workqueue.NewTypedDelayingQueue[uint32]()
	readyAt := make([]atomic.Int64, keys)
	var mu sync.Mutex
	lateness := make([]time.Duration, 0, keys)
	var got atomic.Int64
	base := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				late := time.Since(base) - time.Duration(readyAt[key].Load())
				mu.Lock()
				lateness = append(lateness, late)
				mu.Unlock()
				q.Done(key)
				if got.Add(1) == keys {
					q.ShutDown()
				}
			}
		}()
	}
	r := rng(42)
	calls := time.Now()
	for k := uint32(0); k < keys; k++ {
		delay := time.Duration(r.next() % uint64(maxDelay))
		readyAt[k].Store(int64(time.Since(base) + delay))
		q.AddAfter(k, delay)
	}
	perCall := time.Since(calls) / keys
	wg.Wait()
	total := time.Since(base)
	sort.Slice(lateness, func(i, j int) bool { return lateness[i] < lateness[j] })
	pick := func(q float64) time.Duration {
		d := lateness[int(float64(len(lateness)-1)*q)]
		if d < 0 {
			return 0
		}
		return d
	}
	return perCall, total, pick(0.5), pick(0.99)
}

func best(f func() time.Duration) time.Duration {
	b := time.Duration(1 << 62)
	for i := 0; i < runs; i++ {
		if d := f(); d < b {
			b = d
		}
	}
	return b
}

func main() {
	fmt.Printf("client-go workqueue throughput (%d cores, GOMAXPROCS %d, best of %d runs)\n\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runs)
	fmt.Printf("add/get/done cycle, %d keys x %d rounds:\n", keys, rounds)
	for _, workers := range []int{1, 2, 8} {
		d := best(func() time.Duration { return cycle(workers) })
		fmt.Printf("  %d goroutine(s): %7d ns/item  %10.0f items/s\n", workers, d.Nanoseconds(), 1/d.Seconds())
	}
	fmt.Printf("\ncontended adds of random keys (of %d), 2 producers:\n", keys)
	for _, workers := range []int{1, 2, 8} {
		d := time.Duration(1 << 62)
		var processed int64
		for i := 0; i < runs; i++ {
			if c, p := contended(2, workers); c < d {
				d, processed = c, p
			}
		}
		fmt.Printf("  %d goroutine(s): %7d ns/add  %10.0f adds/s  (%d items processed of 200000 adds)\n", workers, d.Nanoseconds(), 1/d.Seconds(), processed)
	}
	fmt.Printf("\nAddAfter, %d keys with random delays, 2 worker goroutines:\n", keys)
	for _, maxDelay := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond} {
		perCall := time.Duration(1 << 62)
		var total, p50, p99 time.Duration
		for i := 0; i < runs; i++ {
			if c, t, a, b := addAfterRandom(maxDelay); c < perCall {
				perCall, total, p50, p99 = c, t, a, b
			}
		}
		fmt.Printf("  delays < %v: %5d ns/AddAfter  all done in %.1f ms  lateness p50 %.0f us, p99 %.0f us\n",
			maxDelay, perCall.Nanoseconds(), total.Seconds()*1e3, p50.Seconds()*1e6, p99.Seconds()*1e6)
	}
}
