package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// reaper ends the simulated kubelet's processes (containers' commands and exec'd commands,
// each the leader of a process group of its own) when this server ends, however it ends: a
// stop, a crash, or a SIGKILL (from a user, the OOM killer, or kclient-testenv after its stop
// grace), when no code of this process runs any more. Without it, `sh -c 'sleep 3600'` in a pod
// of a killed server ran on for an hour; the parent-death signal (Pdeathsig) would only reach
// `sh`, not the `sleep` it started, nor work outside Linux.
//
// It is a small `sh` of its own process group (so that a signal to the server's group, such as
// a terminal's Ctrl-C or a harness killing it, does not take it along) that reads the process
// groups to watch from a pipe only this server holds: "add <pgid>" when a leader is started,
// "del <pgid>" once its group is gone (the leader was reaped and its group killed). When the
// pipe ends, which the system does when this process ends in any way, it SIGKILLs every group
// still registered, then every process tagged as a container's of this server (processTagEnv
// with this server's token, found in /proc as killTagged finds them): what an exec'd command
// left running after it exited (its group is no longer registered) and what left its group
// (setsid). A group is registered only while its leader is unreaped (or until its group was
// killed), so its id cannot have been reused by another process; a tagged process is read
// again just before it is signalled, so only a pid reused in that instant could be hit.
type reaper struct {
	mu sync.Mutex
	w  *os.File // the pipe to the reaper; nil when none runs
}

// reaperScript is what the reaper runs, with this server's token as $1: it keeps the
// registered groups in a space-separated list, and ignores the signals a terminal or a
// process-group kill sends, so that only the end of its input ends it. The tagged processes
// are found with grep -z (NUL-separated records: one environment entry each), scanning again
// until a scan finds none, as killTagged does (bounded, against a process that forks faster
// than it is killed).
const reaperScript = `trap '' HUP INT TERM QUIT PIPE
groups=' '
while read -r op pgid; do
  case $op in
    add) groups="$groups$pgid " ;;
    del) case $groups in *" $pgid "*) groups="${groups%%" $pgid "*} ${groups#*" $pgid "}" ;; esac ;;
  esac
done
for pgid in $groups; do kill -s KILL -- "-$pgid" 2>/dev/null; done
tag="^` + processTagEnv + `=$1/"
rounds=0
while [ $rounds -lt 10 ]; do
  rounds=$((rounds + 1))
  found=
  for environ in $(grep -lsz -e "$tag" /proc/[0-9]*/environ); do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    if grep -qsz -e "$tag" "$environ"; then
      found=1
      kill -s KILL "$pid" 2>/dev/null
    fi
  done
  [ -n "$found" ] || break
done
`

// startReaper starts the reaper for the processes tagged with token (containerRuntime.token).
// Without one (no /bin/sh), processes run as before and are still stopped on a clean exit, but
// not after a SIGKILL of this server: it says so on stderr.
func startReaper(token string) *reaper {
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: no process reaper (%v): pod processes outlive a killed server\n", err)
		return &reaper{}
	}
	defer func() { _ = r.Close() }()
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "testenv-reaper", token)
	// Its input is the read end; the write end stays here only (Go opens it close-on-exec, so
	// no process started here holds it).
	cmd.Stdin = r
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		fmt.Fprintf(os.Stderr, "testenv: no process reaper (%v): pod processes outlive a killed server\n", err)
		return &reaper{}
	}
	// Reaps it should it end early (killed by someone); writes then fail and are ignored.
	go func() { _ = cmd.Wait() }()
	return &reaper{w: w}
}

// add registers the process group of a leader just started (pgid is its pid).
func (p *reaper) add(pgid int) { p.send("add", pgid) }

// del unregisters a process group that is gone.
func (p *reaper) del(pgid int) { p.send("del", pgid) }

func (p *reaper) send(op string, pgid int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == nil {
		return
	}
	if _, err := fmt.Fprintf(p.w, "%s %d\n", op, pgid); err != nil {
		// The reaper is gone; say so once.
		fmt.Fprintf(os.Stderr, "testenv: the process reaper is gone (%v): pod processes outlive a killed server\n", err)
		_ = p.w.Close()
		p.w = nil
	}
}

// killGroup ends what is left of the process group of a leader that exited, as a container's
// processes end with its main process, and unregisters it. Called once the leader was reaped:
// its group id stays in use (and cannot be reused) while any member lives, and a group without
// members is gone (ESRCH).
func (p *reaper) killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	p.del(pgid)
}
