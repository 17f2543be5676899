// src/platform/sim/files_posix.cpp — pto_platform/files.h on POSIX.
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pto_platform/files.h"

namespace pto {

std::string platform_directory_of_this_binary() {
  static const char anchor = 0;  // in the same binary as this function's caller
  Dl_info info{};
  if (dladdr(&anchor, &info) == 0 || info.dli_fname == nullptr) return {};
  // dli_fname is the path the loader was given: resolve a relative argv[0] or a symlinked
  // package to the directory that actually holds the files.
  std::string file = info.dli_fname;
  if (char *real = realpath(file.c_str(), nullptr)) {
    file = real;
    free(real);
  }
  const std::string::size_type slash = file.rfind('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? std::string("/") : file.substr(0, slash);
}

int platform_make_directories(const std::string &path) {
  if (path.empty()) return ENOENT;
  // Create each prefix in turn; EEXIST is success because another process (or thread) may
  // create the same directory at the same moment.
  for (std::string::size_type pos = 1;; ++pos) {
    pos = path.find('/', pos);
    const std::string prefix = path.substr(0, pos);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return errno;
    if (pos == std::string::npos) break;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

bool platform_elf_exports(const std::string &path, const char *symbol) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    close(fd);
    return false;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void *map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return false;
  const unsigned char *base = static_cast<const unsigned char *>(map);
  // Every offset read below is checked against the file size: a truncated or hostile file
  // gives false, never a read past the mapping.
  auto in_file = [size](uint64_t offset, uint64_t length) {
    return offset <= size && length <= size - offset;
  };
  bool found = false;
  const Elf64_Ehdr *eh = reinterpret_cast<const Elf64_Ehdr *>(base);
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shentsize == sizeof(Elf64_Shdr) &&
      in_file(eh->e_shoff, static_cast<uint64_t>(eh->e_shnum) * sizeof(Elf64_Shdr))) {
    const Elf64_Shdr *sections = reinterpret_cast<const Elf64_Shdr *>(base + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum && !found; ++i) {
      const Elf64_Shdr &symtab = sections[i];
      if (symtab.sh_type != SHT_DYNSYM || symtab.sh_entsize != sizeof(Elf64_Sym) ||
          symtab.sh_link >= eh->e_shnum || !in_file(symtab.sh_offset, symtab.sh_size)) {
        continue;
      }
      const Elf64_Shdr &strtab = sections[symtab.sh_link];
      if (!in_file(strtab.sh_offset, strtab.sh_size)) continue;
      const char *names = reinterpret_cast<const char *>(base + strtab.sh_offset);
      const Elf64_Sym *syms = reinterpret_cast<const Elf64_Sym *>(base + symtab.sh_offset);
      const size_t want = strlen(symbol);
      for (uint64_t k = 0; k < symtab.sh_size / sizeof(Elf64_Sym); ++k) {
        const Elf64_Sym &s = syms[k];
        const unsigned bind = ELF64_ST_BIND(s.st_info);
        if (s.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
        if (s.st_name >= strtab.sh_size || strtab.sh_size - s.st_name <= want) continue;
        if (memcmp(names + s.st_name, symbol, want + 1) == 0) {
          found = true;
          break;
        }
      }
    }
  }
  munmap(map, size);
  return found;
}

}  // namespace pto
