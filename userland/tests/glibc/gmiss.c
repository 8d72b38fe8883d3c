/* libgmiss.so.1: the library gmissing needs (left out of the bundle). */
int gmiss_value(void)
{
	return 0;
}
