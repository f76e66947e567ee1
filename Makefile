# RSDL lab. Main entry points: make demo, make check. See README.md.
# Settings come from the environment or the command line (make check BOOTS=eevdf-smp2):
# RSDL_WORK, KERNEL, BOOTS, ACCEL, BOOT_TIMEOUT, SMP, RSDL, CMDLINE, QUICK, REPS,
# SOAK_MIN, SOAK_KERNEL, PRISTINE_KERNEL, SOAK_BOOTS.
SHELL := /bin/bash

.PHONY: help deps tree export-patches kernel kernel-perf initramfs check demo boot series soak

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## make check           build the debug kernel, run the harness self-tests and the guest suite
check:
	scripts/check.sh

## make series          git am patches/ onto pristine 6.12, checkpatch --strict and build every commit
series: tree
	scripts/check-series.sh

## make demo            RSDL | EEVDF | RSDL+lending on the perf kernel: snag workload, latency, fairness, throughput (QUICK=1)
demo:
	scripts/demo.sh

## make soak           stress-ng + trinity + hotplug soak: RSDL | EEVDF | pristine 6.12, 1/2/4 vCPUs (SOAK_MIN=10)
soak:
	scripts/soak.sh

## make boot            interactive shell in a guest (SMP=2, RSDL=off, KERNEL=..., CMDLINE=...)
boot:
	scripts/boot.sh

## make deps            apt-get install what the lab needs (idempotent)
deps:
	scripts/deps.sh

## make tree            $RSDL_WORK/linux = base + patches/series
tree: deps
	scripts/prepare-tree.sh

## make export-patches  write base..HEAD of $RSDL_WORK/linux to patches/ and patches/series
export-patches:
	scripts/export-patches.sh

## make kernel          build the debug kernel (make kernel-perf: the benchmark kernel)
kernel: tree
	scripts/build-kernel.sh debug

kernel-perf: tree
	scripts/build-kernel.sh perf

## make initramfs       build $RSDL_WORK/initramfs-lab.cpio.gz
initramfs: deps
	scripts/build-initramfs.sh
