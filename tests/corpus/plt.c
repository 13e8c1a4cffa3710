/* PLT-heavy: many libc calls through lazily bound PLT entries. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char buf[128], out[128];
	unsigned long sum = 0;

	for (int i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "item-%d-%x", i, i * 31);
		strcpy(out, buf);
		strcat(out, "!");
		sum += strlen(out) + (unsigned long)abs(i - 50) +
		       (unsigned long)toupper(out[0]) + (unsigned long)atoi(buf + 5);
		if (strchr(out, '7'))
			sum += (unsigned long)strcmp(out, buf);
		memset(buf, 0, sizeof(buf));
	}
	printf("%lu\n", sum);
	return 0;
}
