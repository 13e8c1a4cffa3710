// C++ exceptions: the unwinder (libgcc_s), landing pads, rethrow.
#include <cstdio>
#include <stdexcept>
#include <string>

__attribute__((noinline)) static int thrower(int n)
{
	if (n % 3 == 0)
		throw std::runtime_error("three " + std::to_string(n));
	if (n % 5 == 0)
		throw n;
	return n;
}

__attribute__((noinline)) static int middle(int n)
{
	std::string guard = "guard";
	try {
		return thrower(n) + (int)guard.size();
	} catch (int v) {
		throw std::logic_error("int " + std::to_string(v));
	}
}

int main()
{
	int caught = 0, sum = 0;

	for (int i = 1; i < 7; i++) {
		try {
			sum += middle(i);
		} catch (const std::exception &e) {
			caught++;
		}
	}
	std::printf("%d %d\n", caught, sum);
	return 0;
}
