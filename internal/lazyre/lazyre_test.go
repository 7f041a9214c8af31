package lazyre

import (
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLazy(t *testing.T) {
	r := New(`^a(b+)$`)
	if !r.MatchString("abb") || r.MatchString("ac") {
		t.Fatal("MatchString")
	}
	if m := r.FindStringSubmatch("abbb"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("FindStringSubmatch = %q", m)
	}
	if r.String() != `^a(b+)$` || r.Regexp().NumSubexp() != 1 {
		t.Fatal("String/Regexp")
	}
	if err := CompileAll(); err != nil {
		t.Fatal(err)
	}
}

// TestCompileAllFindsBadPattern: a bad pattern, which would have panicked
// at package initialization, is reported by CompileAll.
func TestCompileAllFindsBadPattern(t *testing.T) {
	New(`a(`)
	defer func() { all.list = all.list[:len(all.list)-1] }()
	if err := CompileAll(); err == nil {
		t.Fatal("CompileAll accepted a(")
	}
}

// TestCompiled lists a pattern once it has been used, not before.
func TestCompiled(t *testing.T) {
	r := New(`^compiled-test-[0-9]+$`)
	// Compiled lists patterns, not Regexps: the compiled r of an earlier
	// run (-count=2) would list this run's pattern before its first use.
	t.Cleanup(func() {
		all.mu.Lock()
		all.list = slices.DeleteFunc(all.list, func(x *Regexp) bool { return x == r })
		all.mu.Unlock()
	})
	has := func() bool { return slices.Contains(Compiled(), r.String()) }
	if has() {
		t.Fatal("listed before its first use")
	}
	r.MatchString("compiled-test-1")
	if !has() {
		t.Fatal("not listed after its first use")
	}
}

// TestNewAllocatesOnce: New, which runs during package initialization of
// every binary for every pattern, makes one allocation (the Regexp; the
// list it joins grows rarely), and no closure until first use.
func TestNewAllocatesOnce(t *testing.T) {
	n := len(all.list)
	t.Cleanup(func() {
		all.mu.Lock()
		all.list = all.list[:n]
		all.mu.Unlock()
	})
	if allocs := testing.AllocsPerRun(100, func() { New(`^x$`) }); allocs > 1 {
		t.Fatalf("New makes %v allocations, want 1", allocs)
	}
}

// TestBadPatternPanicsEveryUse: a pattern that does not compile panics at
// its first use and at every later one.
func TestBadPatternPanicsEveryUse(t *testing.T) {
	r := New(`b(`)
	defer func() { all.list = all.list[:len(all.list)-1] }()
	for i := range 2 {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("use %d of a bad pattern did not panic", i+1)
				}
			}()
			r.MatchString("b")
		}()
	}
}
