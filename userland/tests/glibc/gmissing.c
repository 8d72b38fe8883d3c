/* gmissing: needs libgmiss.so.1, which tools/glibc_bundle.py builds but
 * leaves out of the bundle: ld.so must say so and exit 127. */
int gmiss_value(void);

int main(void)
{
	return gmiss_value();
}
