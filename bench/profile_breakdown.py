#!/usr/bin/env python3
"""Sums a perf profile (`perf record` of a server) by what the time is for:
the kernel's TCP path, wakeups, system-call entry, the clock, and the parts
of a request in the server (parsing, dispatch, lookup, reply...). Each
sample counts once, for the function it was taken in (self time), matched
by name against the rules below in order. Used by bench/profile.sh.

    python3 bench/profile_breakdown.py perf.data
"""
import collections
import re
import subprocess
import sys

RULES = [
    ("clock reads", r"clock_gettime|vdso|Timespec|read_tsc|ktime_get"),
    ("system-call entry and exit, fd lookup",
     r"do_syscall_64|entry_SYSCALL|syscall_exit|exit_to_user|fdget|__sys_(sendto|recvfrom|read|write)|__x64_sys|^__send$|"
     r"__libc_(recv|send|read|write)|^(read|write)$|asynccancel|srso|fput|sock_(sendmsg|recvmsg)|__sock_sendmsg|sockfd_lookup|"
     r"import_ubuf|security_socket|rcu_read|ksys_(read|write)|vfs_(read|write)|sock_(read|write)_iter|rw_verify_area"),
    ("epoll", r"epoll|^ep_|sock_poll|tcp_poll"),
    ("scheduler and wakeups",
     r"spin_unlock_irqrestore|finish_task_switch|schedule|try_to_wake|wake_up|select_task|enqueue_task|dequeue_task|"
     r"update_curr|pick_next|ttwu|switch_to|__switch|native_sched|raw_spin"),
    ("TCP/IP, both ends of the loopback",
     r"tcp|^ip_|inet|skb|net_rx|__dev_queue|loopback|process_backlog|netif|bbr|__napi|dst_|nf_|^sk_|copy_to_iter|"
     r"copy_from_iter|_copy_|kmem_cache|kfree|__kmalloc|kmalloc|page_frag|virt_addr_valid|simple_copy|__local_bh|"
     r"do_softirq|handle_softirqs|__mod_timer|lock_sock|release_sock|mem_cgroup|refill_stock|sock_def|memcg|"
     r"__check_object_size|check_heap|__build_skb|napi|raw_local_deliver|eth_type_trans|netdev_|dev_hard_start|ipv4_"),
    ("request parsing", r"parse::|number::|Frame::|processMultibulkBuffer|processInputBuffer|string2ll|sdsMakeRoom"),
    ("command lookup and dispatch", r"table::|cmd::call|cmd::dispatch|keyspec|Args::|lookupCommand|processCommand|^call$|dictSdsKeyCaseCompare"),
    ("prefetch planner", r"prefetch::|stage"),
    ("key location and shard locks", r"keyspace::|LockSet|slot::|locate|smallvec|crc16|lock_one|parking_lot|Mutex"),
    ("table lookup and value", r"tern_table|shard::|entry::|expire_if|Hash for|foldhash|cmd::strings|dictFind|lookupKey|kvstore|siphash|getGenericCommand|dbFind"),
    ("reply building", r"outbuf|OutBuf|encode|memmove|memcpy|reply|addReply|_addReply|writeToClient|_writeToClient"),
    ("event loop and connection bookkeeping", r"net::|Worker::|Conn::|account_mem|slab|aeProcessEvents|readQueryFromClient|beforeSleep|handleClients|connSocket"),
    ("allocation", r"malloc|free|jemalloc|je_|sdallocx|rallocx|mallocx|zmalloc"),
]


def main():
    out = subprocess.run(["perf", "report", "-i", sys.argv[1], "--no-children", "--sort", "symbol", "--stdio", "-g", "none"],
                         capture_output=True, text=True, check=True).stdout
    tot = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[(.)\]\s+(.*?)(\s+-\s+-)?\s*$", line)
        if not m:
            continue
        pct, ring, sym = float(m.group(1)), m.group(2), m.group(3)
        for name, rx in RULES:
            if re.search(rx, sym):
                tot[name] += pct
                break
        else:
            tot["other, kernel" if ring == "k" else "other, server"] += pct
    print("| where | share of server CPU |")
    print("|---|---:|")
    for name in [r[0] for r in RULES] + ["other, kernel", "other, server"]:
        print(f"| {name} | {tot[name]:.1f}% |")


if __name__ == "__main__":
    main()
