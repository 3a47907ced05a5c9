#ifndef KOPT_VERSION_H
#define KOPT_VERSION_H

#define KOPT_VERSION "0.1.0"

#endif
