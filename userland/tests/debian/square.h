/* The project run.sh builds with Debian's make -j4. */
int square(int x);
int cube(int x);
