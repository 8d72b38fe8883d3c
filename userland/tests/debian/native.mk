# The project native.sh builds with Debian's make -j4 on the Debian root:
# three objects compiled by Debian's gcc (through its driver, cc1 and as),
# linked by collect2 and ld against glibc, as on any Debian system.
CC = gcc
CFLAGS = -O2 -Wall
OBJS = main.o square.o cube.o

prog: $(OBJS)
	$(CC) -o $@ $(OBJS)

%.o: %.c square.h
	$(CC) $(CFLAGS) -c $< -o $@
