// Command bench-workqueue is the client-go side of the workqueue benchmark
// (bench/workqueue/run): the same measurements as ../src/main.rs on
// k8s.io/client-go/util/workqueue, one per process, printed as one JSON line.
//
//	bench-workqueue drain PRODUCERS WORKERS distinct|repeated ADDS [busy:US|wait:US]
//	bench-workqueue delayed add_after|add_rate_limited PENDING
//	bench-workqueue fire ITEMS SPREAD_MS WORKERS
//	bench-workqueue threads QUEUES
//	bench-workqueue merged ADDS
//
// Producers and workers are goroutines (Go has one worker API: Get).
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/util/workqueue"
)

const repeatedKeys = 1000

// Latency is sampled on the keys divisible by this, as on the kclient side.
const sampleEvery = 16

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bench-workqueue drain PRODUCERS WORKERS distinct|repeated ADDS [busy:US|wait:US] | delayed add_after|add_rate_limited PENDING | fire ITEMS SPREAD_MS WORKERS | threads QUEUES | merged ADDS")
	os.Exit(2)
}

func num(i int) int {
	if i >= len(os.Args) {
		usage()
	}
	n, err := strconv.Atoi(os.Args[i])
	if err != nil {
		usage()
	}
	return n
}

func arg(i int) string {
	if i >= len(os.Args) {
		usage()
	}
	return os.Args[i]
}

func percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(float64(len(sorted)-1)*q+0.5)]
}

func main() {
	switch arg(1) {
	case "drain":
		producers, workers, keys, adds := num(2), num(3), arg(4), num(5)
		if keys != "distinct" && keys != "repeated" {
			usage()
		}
		work := "none"
		if len(os.Args) > 6 {
			work = arg(6)
		}
		busy, wait := parseWork(work)
		emit(fmt.Sprintf("{\"bench\":\"drain\",\"impl\":\"client-go\",\"api\":\"goroutines\",\"producers\":%d,\"workers\":%d,\"keys\":%q,\"adds\":%d,\"work\":%q,%s}",
			producers, workers, keys, adds, work, drain(producers, workers, keys == "repeated", adds, busy, wait)))
	case "delayed":
		kind, pending := arg(2), num(3)
		emit(fmt.Sprintf("{\"bench\":\"delayed\",\"impl\":\"client-go\",\"kind\":%q,\"pending\":%d,\"ns_per_call\":%.1f}",
			kind, pending, delayed(kind, pending)))
	case "fire":
		items, spread, workers := num(2), num(3), num(4)
		emit(fmt.Sprintf("{\"bench\":\"fire\",\"impl\":\"client-go\",\"items\":%d,\"spread_ms\":%d,\"workers\":%d,%s}",
			items, spread, workers, fire(items, time.Duration(spread)*time.Millisecond, workers)))
	case "threads":
		queues := num(2)
		before := threadCount()
		held := make([]workqueue.TypedDelayingInterface[int], queues)
		for i := range held {
			held[i] = workqueue.NewTypedDelayingQueue[int]()
			held[i].AddAfter(i, time.Hour)
		}
		time.Sleep(200 * time.Millisecond)
		emit(fmt.Sprintf("{\"bench\":\"threads\",\"impl\":\"client-go\",\"queues\":%d,\"threads_before\":%d,\"threads_with_queues\":%d}",
			queues, before, threadCount()))
		runtime.KeepAlive(held)
	case "merged":
		adds := num(2)
		elapsed := merged(adds)
		emit(fmt.Sprintf("{\"bench\":\"merged\",\"impl\":\"client-go\",\"from\":\"goroutine\",\"adds\":%d,\"elapsed_s\":%.6f,\"ns_per_add\":%.2f}",
			adds, elapsed.Seconds(), float64(elapsed.Nanoseconds())/float64(max(adds, 1))))
	default:
		usage()
	}
}

// merged times adds adds from one goroutine, each merging into one of repeatedKeys waiting
// items (nothing gets): the producer's side of a repeated drain alone, as on the kclient side.
func merged(adds int) time.Duration {
	q := workqueue.NewTyped[int]()
	for key := 0; key < repeatedKeys; key++ {
		q.Add(key)
	}
	done := make(chan time.Duration)
	go func() {
		start := time.Now()
		for i := 0; i < adds; i++ {
			q.Add(i % repeatedKeys)
		}
		done <- time.Since(start)
	}()
	return <-done
}

// emit prints one result line: json (one JSON object) with the process's peak resident set
// size added as peak_rss_kb, read from the kernel's high-water mark of this program's memory
// (VmHWM). The driver's getrusage figure cannot serve: Linux keeps the larger peak of the
// process from before exec, the Python driver that forked it.
func emit(json string) {
	if kb, ok := peakRSSKB(); ok {
		json = strings.TrimSuffix(json, "}") + fmt.Sprintf(",\"peak_rss_kb\":%d}", kb)
	}
	fmt.Println(json)
}

// peakRSSKB is VmHWM from /proc/self/status, in KiB (Linux only).
func peakRSSKB() (int64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

func threadCount() int {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	return len(entries)
}

// parseWork reads busy:US or wait:US (what each worker does per item) as the time to spin
// and the time to sleep; "none" is neither.
func parseWork(work string) (busy, wait time.Duration) {
	if work == "none" {
		return 0, 0
	}
	kind, us, ok := strings.Cut(work, ":")
	n, err := strconv.Atoi(us)
	if !ok || err != nil {
		usage()
	}
	switch kind {
	case "busy":
		busy = time.Duration(n) * time.Microsecond
	case "wait":
		wait = time.Duration(n) * time.Microsecond
	default:
		usage()
	}
	return busy, wait
}

// drain measures one drain; each worker spins for busy and then sleeps for wait per item, as
// a reconcile that computes or waits for the API server would. The CPU seconds are the
// process's over the drain's interval, as the kclient harness measures them.
func drain(producers, workers int, repeated bool, adds int, busy, wait time.Duration) string {
	q := workqueue.NewTyped[int]()
	keySpace := adds
	if repeated {
		keySpace = repeatedKeys
	}
	stamps := make([]atomic.Int64, keySpace)
	epoch := time.Now()
	stamp := func() int64 { return int64(time.Since(epoch)) + 1 }
	var processed atomic.Int64
	var mu sync.Mutex
	var latencies []int64
	var workersDone sync.WaitGroup
	for w := 0; w < workers; w++ {
		workersDone.Add(1)
		go func() {
			defer workersDone.Done()
			var mine []int64
			n := int64(0)
			for {
				key, shutdown := q.Get()
				if shutdown {
					break
				}
				if key%sampleEvery == 0 {
					now := stamp()
					if added := stamps[key].Swap(0); added != 0 {
						mine = append(mine, now-added)
					}
				}
				if busy > 0 {
					for start := time.Now(); time.Since(start) < busy; {
					}
				}
				if wait > 0 {
					time.Sleep(wait)
				}
				n++
				q.Done(key)
			}
			processed.Add(n)
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	var gate, producersDone sync.WaitGroup
	gate.Add(1)
	for p := 0; p < producers; p++ {
		share := adds / producers
		if p < adds%producers {
			share++
		}
		producersDone.Add(1)
		go func(p, share int) {
			defer producersDone.Done()
			gate.Wait()
			for i := 0; i < share; i++ {
				key := (p + i*producers) % keySpace
				if key%sampleEvery == 0 {
					stamps[key].CompareAndSwap(0, stamp())
				}
				q.Add(key)
			}
		}(p, share)
	}
	userBefore, sysBefore, cpuBefore := cpuSeconds()
	start := time.Now()
	gate.Done()
	producersDone.Wait()
	q.ShutDownWithDrain()
	workersDone.Wait()
	elapsed := time.Since(start)
	userAfter, sysAfter, cpuAfter := cpuSeconds()
	// The drain's CPU: left out of the line if getrusage failed (it does not on Linux).
	cpu := ""
	if cpuBefore && cpuAfter {
		cpu = fmt.Sprintf(",\"drain_user_s\":%.6f,\"drain_sys_s\":%.6f",
			userAfter-userBefore, sysAfter-sysBefore)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	return fmt.Sprintf("\"seconds\":%.6f,\"processed\":%d,\"p50_us\":%.2f,\"p99_us\":%.2f,"+
		"\"max_us\":%.2f,\"samples\":%d%s",
		elapsed.Seconds(), processed.Load(),
		float64(percentile(latencies, 0.50))/1e3, float64(percentile(latencies, 0.99))/1e3,
		float64(percentile(latencies, 1.0))/1e3, len(latencies), cpu)
}

// cpuSeconds returns the user and system CPU seconds this process has spent so far, all its
// threads included (getrusage(RUSAGE_SELF)), and whether it could read them.
func cpuSeconds() (user, sys float64, ok bool) {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0, 0, false
	}
	seconds := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return seconds(usage.Utime), seconds(usage.Stime), true
}

func delayed(kind string, pending int) float64 {
	q := workqueue.NewTypedRateLimitingQueue[int](workqueue.DefaultTypedControllerRateLimiter[int]())
	call := func(key int) {
		switch kind {
		case "add_after":
			q.AddAfter(key, time.Hour)
		case "add_rate_limited":
			q.AddRateLimited(key)
		default:
			usage()
		}
	}
	for key := 0; key < pending; key++ {
		call(key)
	}
	start := time.Now()
	for key := pending; key < 2*pending; key++ {
		call(key)
	}
	ns := float64(time.Since(start).Nanoseconds()) / float64(pending)
	q.ShutDown()
	return ns
}

func fire(items int, spread time.Duration, workers int) string {
	q := workqueue.NewTypedDelayingQueue[int]()
	start := time.Now()
	readyAt := make([]atomic.Int64, items)
	var done atomic.Int64
	var mu sync.Mutex
	var late []int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []int64
			for {
				key, shutdown := q.Get()
				if shutdown {
					break
				}
				now := int64(time.Since(start))
				l := now - readyAt[key].Load()
				if l < 0 {
					l = 0
				}
				mine = append(mine, l)
				q.Done(key)
				if done.Add(1) == int64(items) {
					q.ShutDown()
				}
			}
			mu.Lock()
			late = append(late, mine...)
			mu.Unlock()
		}()
	}
	step := int64(spread) / int64(items)
	for n := 0; n < items; n++ {
		key := int((uint64(n) * 2654435761) % uint64(items))
		delay := time.Duration(step * int64(key))
		readyAt[key].Store(int64(time.Since(start) + delay))
		q.AddAfter(key, delay)
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	return fmt.Sprintf("\"seconds\":%.6f,\"processed\":%d,\"late_p50_us\":%.1f,\"late_p99_us\":%.1f",
		elapsed.Seconds(), len(late), float64(percentile(late, 0.50))/1e3, float64(percentile(late, 0.99))/1e3)
}
