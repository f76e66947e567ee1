/*
 * qemu-exit STATUS: leave QEMU through its isa-debug-exit device
 * (-device isa-debug-exit,iobase=0xf4,iosize=0x04). QEMU then exits with
 * (STATUS << 1) | 1, so the host can tell a reported status from a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

#define DEBUG_EXIT_PORT 0xf4

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 0;

	if (ioperm(DEBUG_EXIT_PORT, 4, 1)) {
		perror("qemu-exit: ioperm");
		return 1;
	}
	outb(status & 0xff, DEBUG_EXIT_PORT);
	fprintf(stderr, "qemu-exit: no isa-debug-exit device at 0x%x\n", DEBUG_EXIT_PORT);
	return 1;
}
