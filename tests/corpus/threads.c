/* Three threads besides main, a mutex, joins. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *work(void *arg)
{
	long id = (long)arg, s = 0;

	for (long i = 0; i < 2000; i++)
		s += (i * id) % 7;
	pthread_mutex_lock(&lock);
	total += s;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, work, (void *)(i + 1));
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", total);
	return 0;
}
