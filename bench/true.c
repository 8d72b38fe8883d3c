/*
 * true -- the trivial static program the exec benchmark runs.  It goes
 * through musl's ordinary start-up (arch_prctl, set_tid_address) and exit
 * (exit_group), as any user program does.
 */
int main(void)
{
	return 0;
}
