#define _GNU_SOURCE
#include <liburing.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>
#define MAXF 64
#define BUFSZ 8192
static char bufs[MAXF][BUFSZ];
static long total;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void plain(int dfd, char **names, int n){
  for(int i=0;i<n;i++){int fd=openat(dfd,names[i],O_RDONLY|O_CLOEXEC);ssize_t r=read(fd,bufs[0],BUFSZ);struct stat st;fstat(fd,&st);close(fd);total+=r+st.st_size;}
}
static struct io_uring ring;
static void uring(int dfd, char **names, int n, int mode){
  for(int b=0;b<n;b+=MAXF){int m=n-b<MAXF?n-b:MAXF; int fds[MAXF];
    struct io_uring_cqe *cqe;
    for(int i=0;i<m;i++){struct io_uring_sqe *s=io_uring_get_sqe(&ring);io_uring_prep_openat(s,dfd,names[b+i],O_RDONLY|O_CLOEXEC,0);s->user_data=i;}
    io_uring_submit_and_wait(&ring,m);
    for(int k=0;k<m;k++){io_uring_wait_cqe(&ring,&cqe);fds[cqe->user_data]=cqe->res;io_uring_cqe_seen(&ring,cqe);}
    for(int i=0;i<m;i++){struct io_uring_sqe *s=io_uring_get_sqe(&ring);io_uring_prep_read(s,fds[i],bufs[i],BUFSZ,0);s->user_data=i;}
    io_uring_submit_and_wait(&ring,m);
    for(int k=0;k<m;k++){io_uring_wait_cqe(&ring,&cqe);total+=cqe->res;io_uring_cqe_seen(&ring,cqe);}
    if(mode==4){static struct statx sx[MAXF];for(int i=0;i<m;i++){struct io_uring_sqe *s=io_uring_get_sqe(&ring);io_uring_prep_statx(s,fds[i],"",AT_EMPTY_PATH,STATX_BASIC_STATS,&sx[i]);}
      io_uring_submit_and_wait(&ring,m);for(int k=0;k<m;k++){io_uring_wait_cqe(&ring,&cqe);io_uring_cqe_seen(&ring,cqe);} for(int i=0;i<m;i++)total+=sx[i].stx_size;}
    else if(mode!=3)for(int i=0;i<m;i++){struct stat st;fstat(fds[i],&st);total+=st.st_size;}
    if(mode==1){for(int i=0;i<m;i++)close(fds[i]);}
    else{for(int i=0;i<m;i++){struct io_uring_sqe *s=io_uring_get_sqe(&ring);io_uring_prep_close(s,fds[i]);}
    io_uring_submit_and_wait(&ring,m);
    for(int k=0;k<m;k++){io_uring_wait_cqe(&ring,&cqe);io_uring_cqe_seen(&ring,cqe);}}
  }
}
int main(int argc,char**argv){
  int mode=atoi(argv[1]); const char*top=argv[2];
  if(mode) io_uring_queue_init(256,&ring,0);
  double t0=now(); struct timespec c0; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&c0);
  char p[4096]; 
  for(int k=0;k<500;k++){snprintf(p,sizeof p,"%s/docs/kernels/kernel-%02d/results",top,k);
    if(k>=100) snprintf(p,sizeof p,"%s/docs/kernels/kernel-%03d/results",top,k);
    DIR*d=opendir(p); if(!d){continue;} char*names[64];int n=0;struct dirent*de;
    while((de=readdir(d))) if(de->d_name[0]!='.') names[n++]=strdup(de->d_name);
    if(mode) uring(dirfd(d),names,n,mode); else plain(dirfd(d),names,n);
    for(int i=0;i<n;i++)free(names[i]); closedir(d);}
  struct timespec c1; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&c1);
  printf("mode %d wall %.1f ms cpu %.1f ms total %ld\n",mode,(now()-t0)*1e3,((c1.tv_sec-c0.tv_sec)+(c1.tv_nsec-c0.tv_nsec)*1e-9)*1e3,total);
}
