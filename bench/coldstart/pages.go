package main

import (
	"bufio"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// residency is which pages of a binary's own file are in a process's page
// tables (what RssFile counts for it), by ELF section and, for the code
// and read-only data, by Go package.
type residency struct {
	sections []span // name, size and resident bytes per section
	packages []span // resident bytes of .text by package, largest first
}

type span struct {
	name           string
	size, resident int64
}

// readResidency reads /proc/PID/maps and /proc/PID/pagemap (the present
// bit needs no privilege) for the mappings of bin and attributes each
// resident page to the sections and symbols it overlaps. It assumes a
// non-PIE executable (go build's default on linux/amd64), whose mapped
// addresses are the ELF virtual addresses.
func readResidency(pid int, bin string) (*residency, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		return nil, fmt.Errorf("%s: not a non-PIE executable", bin)
	}
	resident, err := residentPages(pid, bin)
	if err != nil {
		return nil, err
	}
	page := int64(os.Getpagesize())
	inPage := func(lo, hi int64) int64 { // resident bytes of [lo, hi)
		var n int64
		for p := lo &^ (page - 1); p < hi; p += page {
			if resident[p] {
				n += min(hi, p+page) - max(lo, p)
			}
		}
		return n
	}
	r := &residency{}
	for _, s := range f.Sections {
		if s.Addr == 0 || s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		lo, hi := int64(s.Addr), int64(s.Addr+s.Size)
		r.sections = append(r.sections, span{s.Name, hi - lo, inPage(lo, hi)})
	}
	syms, err := f.Symbols()
	if err != nil {
		return r, nil // stripped: sections only
	}
	text := f.Section(".text")
	byPkg := map[string]*span{}
	for _, s := range syms {
		if text == nil || s.Value < text.Addr || s.Value >= text.Addr+text.Size || s.Size == 0 {
			continue
		}
		p := symbolPackage(s.Name)
		sp := byPkg[p]
		if sp == nil {
			sp = &span{name: p}
			byPkg[p] = sp
		}
		lo := int64(s.Value)
		sp.size += int64(s.Size)
		sp.resident += inPage(lo, lo+int64(s.Size))
	}
	for _, sp := range byPkg {
		r.packages = append(r.packages, *sp)
	}
	slices.SortFunc(r.packages, func(a, b span) int { return cmp.Compare(b.resident, a.resident) })
	return r, nil
}

// residentPages returns the page addresses of pid's mappings of bin whose
// page is present.
func residentPages(pid int, bin string) (map[int64]bool, error) {
	target, err := os.Stat(bin)
	if err != nil {
		return nil, err
	}
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer maps.Close()
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	page := int64(os.Getpagesize())
	resident := map[int64]bool{}
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		if st, err := os.Stat(f[5]); err != nil || !os.SameFile(st, target) {
			continue
		}
		from, to, _ := strings.Cut(f[0], "-")
		lo, err1 := strconv.ParseInt(from, 16, 64)
		hi, err2 := strconv.ParseInt(to, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		buf := make([]byte, 8*((hi-lo)/page))
		if _, err := pm.ReadAt(buf, 8*(lo/page)); err != nil {
			return nil, err
		}
		for i := range (hi - lo) / page {
			if binary.LittleEndian.Uint64(buf[8*i:])&(1<<63) != 0 {
				resident[lo+i*page] = true
			}
		}
	}
	return resident, sc.Err()
}

// symbolPackage is the package path of a Go symbol name
// ("github.com/a/b.(*T).M" → "github.com/a/b"); runtime and assembly
// symbols without a dot are their own name.
func symbolPackage(name string) string {
	name = strings.TrimPrefix(name, "type:.eq.")
	slash := strings.LastIndex(name, "/")
	if dot := strings.Index(name[slash+1:], "."); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

func (r *residency) print(bin string, top int) {
	fmt.Printf("\npages of %s in its page tables (resident / size):\n\n| section | size | resident |\n|---|---|---|\n", bin)
	var size, res int64
	for _, s := range r.sections {
		size, res = size+s.size, res+s.resident
		fmt.Printf("| %s | %.0f KiB | %.0f KiB |\n", s.name, kib(s.size), kib(s.resident))
	}
	fmt.Printf("| all | %.0f KiB | %.0f KiB |\n", kib(size), kib(res))
	if len(r.packages) == 0 {
		return
	}
	fmt.Printf("\n| package (.text) | size | resident |\n|---|---|---|\n")
	for _, p := range r.packages[:min(top, len(r.packages))] {
		fmt.Printf("| %s | %.0f KiB | %.0f KiB |\n", p.name, kib(p.size), kib(p.resident))
	}
}

func kib(n int64) float64 { return float64(n) / 1024 }
